package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/result"
)

// This file drives headless Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4), with
// no dependency. The protocol, unlike --enable-logging, tells console.error
// from console.log, reports uncaught exceptions and failed loads by level,
// and shows every request the page makes.

// chromiumPath finds Chromium; the test fails (never skips) without it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	const install = "headless Chromium is needed to check the HTML report: run `./scripts/install-deps.sh chromium` " +
		"(or `apt-get install -y chromium`), or set STOREBENCH_CHROMIUM to a Chrome/Chromium binary"
	if p := os.Getenv("STOREBENCH_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("STOREBENCH_CHROMIUM=%s: %v; %s", p, err, install)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal(install)
	return ""
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type browser struct {
	cmd     *exec.Cmd
	in      *os.File // we write, Chromium reads (its fd 3)
	stderr  bytes.Buffer
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpMessage
	events  []cdpMessage
	notify  chan struct{}
	closed  chan struct{}
	session string
}

// startBrowser launches headless Chromium and attaches to a new page.
func startBrowser(t *testing.T, ctx context.Context) *browser {
	t.Helper()
	bin := chromiumPath(t)
	profile := t.TempDir()
	toChrome, chromeIn, err := os.Pipe() // Chromium reads toChrome as fd 3
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe() // Chromium writes fromChrome as fd 4
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{in: chromeIn, waiting: map[int]chan cdpMessage{}, notify: make(chan struct{}, 1), closed: make(chan struct{})}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--user-data-dir="+profile,
		"--remote-debugging-pipe", "--window-size=1280,2000", "about:blank")
	b.cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	toChrome.Close()
	fromChrome.Close()
	t.Cleanup(func() {
		b.in.Close()
		done := make(chan struct{})
		go func() { _ = b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = b.cmd.Process.Kill()
			<-done
		}
	})
	go b.read(chromeOut)

	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call(t, ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call(t, ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		b.call(t, ctx, b.session, m, nil, nil)
	}
	return b
}

func (b *browser) read(r *os.File) {
	defer close(b.closed)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.waiting[m.ID]; ok {
				delete(b.waiting, m.ID)
				ch <- m
			}
		} else {
			b.events = append(b.events, m)
			select {
			case b.notify <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
}

// call sends one command and decodes its result into out.
func (b *browser) call(t *testing.T, ctx context.Context, session, method string, params any, out any) {
	t.Helper()
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(data, 0)); err != nil {
		t.Fatalf("chromium %s: %v\n%s", method, err, b.stderr.String())
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			t.Fatalf("chromium %s: %s", method, m.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				t.Fatalf("chromium %s: %v", method, err)
			}
		}
	case <-b.closed:
		t.Fatalf("chromium exited during %s:\n%s", method, b.stderr.String())
	case <-ctx.Done():
		t.Fatalf("chromium %s: no answer: %v", method, ctx.Err())
	}
}

// waitEvent waits for an event of the page's session named method, seen
// after index from.
func (b *browser) waitEvent(t *testing.T, ctx context.Context, method string, from int) {
	t.Helper()
	for {
		b.mu.Lock()
		for _, e := range b.events[from:] {
			if e.Method == method && e.SessionID == b.session {
				b.mu.Unlock()
				return
			}
		}
		b.mu.Unlock()
		select {
		case <-b.notify:
		case <-b.closed:
			t.Fatalf("chromium exited waiting for %s", method)
		case <-ctx.Done():
			t.Fatalf("chromium: no %s: %v", method, ctx.Err())
		}
	}
}

func (b *browser) eventCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.events)
}

// problems lists what the page did wrong: console errors, uncaught
// exceptions, error log entries (failed loads among them) and any request
// that is not for a local file or inline data.
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		switch e.Method {
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "assert" {
				var parts []string
				for _, a := range p.Args {
					parts = append(parts, fmt.Sprint(a.Value)+a.Description)
				}
				out = append(out, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			var p struct {
				Details struct {
					Text      string `json:"text"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			_ = json.Unmarshal(e.Params, &p)
			out = append(out, "uncaught exception: "+p.Details.Text+" "+p.Details.Exception.Description)
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level  string `json:"level"`
					Text   string `json:"text"`
					Source string `json:"source"`
					URL    string `json:"url"`
				} `json:"entry"`
			}
			_ = json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" {
				out = append(out, fmt.Sprintf("log error (%s): %s %s", p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		case "Network.requestWillBeSent":
			var p struct {
				Request struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			_ = json.Unmarshal(e.Params, &p)
			u := p.Request.URL
			if !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "about:") {
				out = append(out, "network request: "+u)
			}
		case "Network.loadingFailed":
			var p struct {
				ErrorText string `json:"errorText"`
			}
			_ = json.Unmarshal(e.Params, &p)
			out = append(out, "load failed: "+p.ErrorText)
		}
	}
	return out
}

// load opens url with the given colour scheme and waits for its load event.
func (b *browser) load(t *testing.T, ctx context.Context, url, scheme string) {
	t.Helper()
	b.call(t, ctx, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 2000, "deviceScaleFactor": 1, "mobile": false}, nil)
	b.call(t, ctx, b.session, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil)
	from := b.eventCount()
	b.call(t, ctx, b.session, "Page.navigate", map[string]any{"url": url}, nil)
	b.waitEvent(t, ctx, "Page.loadEventFired", from)
}

// eval runs a JavaScript expression in the page and decodes its value.
func (b *browser) eval(t *testing.T, ctx context.Context, expr string, out any) {
	t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call(t, ctx, b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("evaluate %q: %s", expr, res.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		t.Fatalf("evaluate %q: %v", expr, err)
	}
}

// screenshot captures the top of the page (1280 × height) as PNG.
func (b *browser) screenshot(t *testing.T, ctx context.Context, path string, height int) {
	t.Helper()
	b.call(t, ctx, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	var shot struct {
		Data string `json:"data"`
	}
	b.call(t, ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": false}, &shot)
	data, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if img.Bounds().Dx() != 1280 {
		t.Errorf("screenshot is %d px wide, want 1280", img.Bounds().Dx())
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// screenshotClip captures height px of the page from y down.
func (b *browser) screenshotClip(t *testing.T, ctx context.Context, path string, y, height int) {
	t.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	clip := map[string]any{"x": 0, "y": y, "width": 1280, "height": height, "scale": 1}
	b.call(t, ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true, "clip": clip}, &shot)
	data, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// screenshotDir keeps the page and its screenshots where
// STOREBENCH_SCREENSHOTS says (with the whole page in slices), else in the
// test's temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("STOREBENCH_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestHTMLInChromium opens the report of one sample result of every suite
// in headless Chromium (browserPage).
func TestHTMLInChromium(t *testing.T) {
	if path := os.Getenv("STOREBENCH_SCREENSHOT_RESULT"); path != "" {
		// To look at another result: STOREBENCH_SCREENSHOTS=dir STOREBENCH_SCREENSHOT_RESULT=result.json
		r, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		browserPage(t, r, screenshotDir(t))
		return
	}
	for _, suite := range append([]string{"quick", "mix"}, suiteSamples...) {
		t.Run(suite, func(t *testing.T) {
			// Two browsers at a time (-parallel is GOMAXPROCS): 35 s
			// one after another was the report package's largest cost.
			t.Parallel()
			var r *result.Result
			switch suite {
			case "quick":
				r = readSample(t)
			case "mix":
				r = readMix(t)
			default:
				r = readSuiteSample(t, suite)
			}
			dir := screenshotDir(t)
			if os.Getenv("STOREBENCH_SCREENSHOTS") != "" {
				dir = filepath.Join(dir, suite)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			browserPage(t, r, dir)
		})
	}
}

// browserPage opens r's report in headless Chromium, in light and dark mode
// and as printed, fails on any console error, exception, failed load or
// network request, checks that every chart was laid out, and keeps a
// screenshot of each mode in dir.
func browserPage(t *testing.T, r *result.Result, dir string) {
	browserHTML(t, func(w io.Writer) error { return HTML(w, r) }, dir)
}

// browserHTML checks the page render writes as browserPage checks a
// report's (history's page too).
func browserHTML(t *testing.T, render func(io.Writer) error, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := render(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	b := startBrowser(t, ctx)
	for _, scheme := range []string{"light", "dark"} {
		b.load(t, ctx, "file://"+page, scheme)
		var laidOut struct {
			Charts, Drawn, Tables int
			Height                int
			Background            string
			Small, NotOneTable    []string // figure ids
		}
		// Readable: wider than 300 px, taller than 80 (a dot plot of one row
		// is 88 px: its axes and the row).
		b.eval(t, ctx, `(() => {
			const svgs = [...document.querySelectorAll("figure.chart svg.plot")];
			return {
				Charts: svgs.length,
				Drawn: svgs.filter(s => { const r = s.getBoundingClientRect(); return r.width > 300 && r.height > 80; }).length,
				Tables: document.querySelectorAll("figure.chart table").length,
				Small: svgs.filter(s => { const r = s.getBoundingClientRect(); return !(r.width > 300 && r.height > 80); }).map(s => s.closest("figure").id + " " + Math.round(s.getBoundingClientRect().width) + "x" + Math.round(s.getBoundingClientRect().height)),
				NotOneTable: [...document.querySelectorAll("figure.chart")].filter(f => f.querySelectorAll("table").length !== 1).map(f => f.id),
				Height: Math.ceil(document.documentElement.scrollHeight),
				Background: getComputedStyle(document.body).backgroundColor,
			};
		})()`, &laidOut)
		// Every figure holds the table of its numbers (an article's figure
		// may be its table alone, without a chart).
		if laidOut.Charts == 0 || laidOut.Drawn != laidOut.Charts || len(laidOut.NotOneTable) > 0 {
			t.Errorf("%s: %d charts, %d laid out at a readable size (not: %v), %d tables (figures without exactly one: %v)",
				scheme, laidOut.Charts, laidOut.Drawn, laidOut.Small, laidOut.Tables, laidOut.NotOneTable)
		}
		wantBG := map[string]string{"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}[scheme]
		if laidOut.Background != wantBG {
			t.Errorf("%s mode: background %s, want %s", scheme, laidOut.Background, wantBG)
		}
		shot := filepath.Join(dir, "report-"+scheme+".png")
		b.screenshot(t, ctx, shot, 2000)
		t.Logf("%s screenshot: %s (page is %d px tall)", scheme, shot, laidOut.Height)
		if os.Getenv("STOREBENCH_SCREENSHOTS") != "" {
			// Asked to keep them: the whole page too, in slices a person can look at.
			for i, y := 0, 0; y < laidOut.Height; i, y = i+1, y+2000 {
				b.screenshotClip(t, ctx, filepath.Join(dir, fmt.Sprintf("report-%s-%d.png", scheme, i+1)), y, min(2000, laidOut.Height-y))
			}
		}
	}
	// Printed: the light palette whatever the screen's, and no collapsed section.
	b.call(t, ctx, b.session, "Emulation.setEmulatedMedia", map[string]any{"media": "print", "features": []map[string]string{{"name": "prefers-color-scheme", "value": "dark"}}}, nil)
	var printed struct{ Background string }
	b.eval(t, ctx, `({Background: getComputedStyle(document.body).backgroundColor})`, &printed)
	if printed.Background != "rgb(255, 255, 255)" {
		t.Errorf("printed in dark mode: background %s, want white", printed.Background)
	}
	if os.Getenv("STOREBENCH_SCREENSHOTS") != "" {
		b.screenshotClip(t, ctx, filepath.Join(dir, "report-print.png"), 0, 2000)
	}
	var pdf struct {
		Data string `json:"data"`
	}
	b.call(t, ctx, b.session, "Page.printToPDF", map[string]any{"printBackground": false}, &pdf)
	if len(pdf.Data) < 1000 {
		t.Errorf("printing produced %d bytes of PDF", len(pdf.Data))
	}
	for _, p := range b.problems() {
		t.Errorf("in Chromium: %s", p)
	}
}

// TestChromiumCatchesProblems proves the check above can fail: a page with a
// console error, an exception, a missing image and a request for an http
// resource is caught on every count.
func TestChromiumCatchesProblems(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	page := filepath.Join(t.TempDir(), "bad.html")
	body := `<!doctype html><html><head><title>bad</title></head><body><p>bad</p>
<img src="missing.png" alt="">
<img src="http://127.0.0.1:9/pixel.png" alt="">
<script>console.log("just-a-log-line"); console.error("broken"); notDefined();</script></body></html>`
	if err := os.WriteFile(page, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, ctx)
	b.load(t, ctx, "file://"+page, "light")
	time.Sleep(300 * time.Millisecond) // let the failed loads report
	got := strings.Join(b.problems(), "\n")
	for _, want := range []string{"console.error: broken", "uncaught exception", "network request: http://127.0.0.1:9/pixel.png", "load failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the check missed %q; it saw:\n%s", want, got)
		}
	}
	if strings.Contains(got, "just-a-log-line") {
		t.Errorf("console.log counted as a problem:\n%s", got)
	}
}
