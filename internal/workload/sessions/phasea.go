package sessions

import (
	"context"
	"fmt"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/store"
)

// runInsert is phase A: one connection inserts p.Inserts sessions one by
// one into the variant's freshly created table. The phase is "insert"; the
// article's ms per insert is its mean.
func runInsert(ctx context.Context, env Env, p Params, hooks Hooks) (Outcome, error) {
	info, err := env.Store.Info(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("sessions: %w", err)
	}
	if _, ok := env.Store.(store.SessionArticle); !ok {
		return Outcome{}, fmt.Errorf("sessions: %w (%s): %w", errNotPostgres, info.Kind, store.ErrUnsupported)
	}
	d, _ := VariantDesign(p.Variant) // checked by Validate
	sum := &schema.Summary{Phase: PhaseInsert, Store: info.Kind, Variant: p.Variant, VariantDoc: VariantDoc[p.Variant], Inserts: p.Inserts}
	sum.Knobs = knobValues(d, env.Store)
	h, err := env.Store.(store.Sessions).OpenSessions(ctx, d.Store(schema.Timing{TTL: p.TTL, Scale: 1}))
	if err != nil {
		return Outcome{Summary: sum}, fmt.Errorf("sessions: %w", err)
	}
	defer h.Close()
	if err := h.Setup(ctx); err != nil {
		return Outcome{Summary: sum}, fmt.Errorf("sessions: %w", err)
	}
	if sum.Catalog, err = h.Describe(ctx); err != nil {
		return Outcome{Summary: sum}, fmt.Errorf("sessions: %w", err)
	}
	w := &inserter{h: h, size: p.PayloadSize, seed: p.Seed, buf: make([]byte, 0, p.PayloadSize)}
	cfg := hooks.Apply(load.Config{Name: "insert", Workers: 1, Ops: p.Inserts, WarmupOps: p.WarmupOps})
	ph, err := load.Run(ctx, cfg, []load.Worker{w})
	out := Outcome{Phases: []metrics.Phase{ph}, Summary: sum}
	if err != nil {
		return out, fmt.Errorf("sessions insert (%s): %w", p.Variant, err)
	}
	return out, nil
}

// inserter creates one session per op.
type inserter struct {
	h    store.SessionClient
	size int
	seed uint64
	buf  []byte
}

func (w *inserter) Do(ctx context.Context, seq int64) error {
	w.buf = appendPayload(w.buf[:0], uint64(seq)+w.seed<<40, w.size)
	_, err := w.h.Create(ctx, seq+1, w.buf)
	return err
}

// knobValues lists the design's knobs and whether the store honours each
// (store.SessionKnobber; none when it does not say).
func knobValues(d Design, s store.Store) []schema.KnobValue {
	applies := map[string]bool{}
	if k, ok := s.(store.SessionKnobber); ok {
		for _, name := range k.SessionKnobs() {
			applies[name] = true
		}
	}
	out := make([]schema.KnobValue, 0, len(Knobs))
	for _, k := range Knobs {
		out = append(out, schema.KnobValue{V: k.V, Name: k.Name, Value: d.Knobs[k.Name], Applies: applies[k.Name]})
	}
	return out
}
