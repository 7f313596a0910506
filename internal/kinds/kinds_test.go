package kinds

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/target"
)

// Every kind has a name of its own, a line for `list`, a prototype the
// workloads check capabilities on, and a way to open it; no URL scheme
// selects two kinds.
func TestEveryKindIsComplete(t *testing.T) {
	names, schemes := map[string]bool{}, map[string]string{}
	for _, k := range All() {
		if k.Name == "" || names[k.Name] {
			t.Errorf("kind %q: name empty or taken twice", k.Name)
		}
		names[k.Name] = true
		if k.Description == "" || k.Prototype == nil || k.ClientPrototype == nil || k.Open == nil {
			t.Errorf("kind %s lacks a description, prototype, client prototype or Open", k.Name)
		}
		for _, s := range k.Schemes {
			if other, ok := schemes[s]; ok {
				t.Errorf("scheme %s selects both %s and %s", s, other, k.Name)
			}
			schemes[s] = k.Name
		}
	}
}

// A kind another process can reopen does so from its store's Info alone,
// also at another location (a power cut's mount): Create makes the
// namespace there and keeps it, Attach opens it and keeps it on Close.
func TestReattachFromInfo(t *testing.T) {
	ctx := context.Background()
	n := 0
	for _, k := range All() {
		if k.Reattach == nil {
			continue
		}
		n++
		t.Run(k.Name, func(t *testing.T) {
			st, err := k.Open(ctx, target.OpenArgs{RunDir: t.TempDir(), Namespace: storetest.Namespace(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close(context.Background()) })
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a, err := k.Reattach.Attach(ctx, info)
			if err != nil {
				t.Fatalf("attach to the store's own namespace: %v", err)
			}
			if err := a.Close(ctx); err != nil {
				t.Fatal(err)
			}
			info.Location = filepath.Join(t.TempDir(), filepath.Base(info.Location))
			if _, err := k.Reattach.Attach(ctx, info); err == nil {
				t.Fatal("attach where nothing was created: no error")
			}
			if err := k.Reattach.Create(ctx, info); err != nil {
				t.Fatal(err)
			}
			for range 2 { // what Create made, and what the first Attach kept
				a, err := k.Reattach.Attach(ctx, info)
				if err != nil {
					t.Fatalf("attach to what Create made: %v", err)
				}
				if err := a.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if n < 2 {
		t.Errorf("%d kinds can be reopened by another process, want files and sqlite at least", n)
	}
}
