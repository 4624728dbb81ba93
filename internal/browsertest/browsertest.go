package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// EnvBrowser names the environment variable holding the browser binary to
// use, overriding the search on PATH.
const EnvBrowser = "SELMEM_CHROMIUM"

// Candidates are the binary names looked for on PATH, in order.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// howToEnable ends every skip or CI failure caused by a missing browser.
const howToEnable = "install Chromium (sudo scripts/install-chromium.sh, or apt-get install chromium) or set " + EnvBrowser + " to a Chrome or Chromium binary"

// Timeout bounds each helper's wait for the browser, so that a broken page
// fails the test instead of hanging it.
const Timeout = 30 * time.Second

// ErrNoBrowser reports that no Chromium or Chrome binary was found.
var ErrNoBrowser = errors.New("no Chromium or Chrome browser found")

// Find returns the path of the browser binary: $SELMEM_CHROMIUM when set
// (it must be an executable file), else the first of Candidates on PATH.
// The error wraps ErrNoBrowser.
func Find() (string, error) {
	if p := os.Getenv(EnvBrowser); p != "" {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s=%s is not an executable file", ErrNoBrowser, EnvBrowser, p)
		}
		return p, nil
	}
	for _, name := range Candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on PATH (looked for %s)", ErrNoBrowser, strings.Join(Candidates, ", "))
}

// Require returns the browser's path. When there is none it skips tb, or
// fails it when CI=true in the environment.
func Require(tb testing.TB) string {
	tb.Helper()
	p, err := Find()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("browsertest: %v (CI=true, so not skipping); %s", err, howToEnable)
		}
		tb.Skipf("browsertest: %v; to run this test, %s", err, howToEnable)
	}
	return p
}

// Browser is a headless browser started for one test.
type Browser struct {
	ctx context.Context // the first tab's chromedp context; owns the process
}

// New starts a headless browser for tb (after Require) and stops it when
// the test ends.
func New(tb testing.TB) *Browser {
	tb.Helper()
	return newBrowser(tb)
}

// NewFramesInProcess is New with every frame of a tab in the tab's
// process, sandboxed and cross-site frames included (no site isolation),
// so that EvalInFrame reaches them. Sandboxes and policies apply as ever.
func NewFramesInProcess(tb testing.TB) *Browser {
	tb.Helper()
	return newBrowser(tb,
		chromedp.Flag("disable-features", "IsolateSandboxedIframes,site-per-process"),
		chromedp.Flag("disable-site-isolation-trials", true))
}

func newBrowser(tb testing.TB, extra ...chromedp.ExecAllocatorOption) *Browser {
	tb.Helper()
	path := Require(tb)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first Run starts the browser; it must not carry a timeout, which
	// would stop the browser when it expires.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`1`)); err != nil {
		tb.Fatalf("browsertest: start %s: %v", path, err)
	}
	return &Browser{ctx: ctx}
}

// ConsoleMessage is a console call, an uncaught exception or a browser
// log entry of a page.
type ConsoleMessage = chromedp.ConsoleMessage

// Violation is one Content-Security-Policy violation a page reported
// (a securitypolicyviolation event).
type Violation struct {
	BlockedURI         string `json:"blockedURI"`
	EffectiveDirective string `json:"effectiveDirective"`
	ViolatedDirective  string `json:"violatedDirective"`
	OriginalPolicy     string `json:"originalPolicy"`
	Disposition        string `json:"disposition"` // "enforce" or "report"
	DocumentURI        string `json:"documentURI"`
	SourceFile         string `json:"sourceFile"`
	LineNumber         int    `json:"lineNumber"`
}

// reportBinding is the page function the violation listener calls.
const reportBinding = "selmemReportCSPViolation"

// listenerJS runs in every document before its own scripts. CSP does not
// apply to it: the browser injects it, the page does not load it.
const listenerJS = `document.addEventListener("securitypolicyviolation", function (e) {
  window.` + reportBinding + `({
    blockedURI: e.blockedURI, effectiveDirective: e.effectiveDirective,
    violatedDirective: e.violatedDirective, originalPolicy: e.originalPolicy,
    disposition: e.disposition, documentURI: e.documentURI,
    sourceFile: e.sourceFile, lineNumber: e.lineNumber
  });
}, true);`

// Page is one browser tab with what it reported so far.
type Page struct {
	tb  testing.TB
	ctx context.Context

	mu         sync.Mutex
	console    []ConsoleMessage
	violations []Violation
	changed    chan struct{} // closed and replaced on each new report
}

// NewPage opens a tab that collects console messages and CSP violations
// from its creation on. It closes when the test ends.
func (b *Browser) NewPage(tb testing.TB) *Page {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	tb.Cleanup(cancel)
	p := &Page{tb: tb, ctx: ctx, changed: make(chan struct{})}
	messages := chromedp.Console(ctx) // opens the tab and subscribes
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			p.record(func() { p.console = append(p.console, m) })
		}
	}()
	err := chromedp.Do(ctx,
		chromedp.ExposeFunc(reportBinding, func(_ context.Context, v Violation) (chromedp.Void, error) {
			p.record(func() { p.violations = append(p.violations, v) })
			return chromedp.Void{}, nil
		}),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: listenerJS})
			return err
		}),
	)
	if err != nil {
		tb.Fatalf("browsertest: open a tab: %v", err)
	}
	return p
}

func (p *Page) record(add func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	add()
	close(p.changed)
	p.changed = make(chan struct{})
}

// do runs actions on the tab with the package Timeout.
func (p *Page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.tb.Fatalf("browsertest: %s: %v%s", what, err, p.consoleTail())
	}
}

// Navigate loads url in the tab and waits for its load event.
func (p *Page) Navigate(url string) {
	p.tb.Helper()
	p.do("navigate to "+url, chromedp.Navigate(url))
}

// WaitVisible waits until an element matching the CSS selector is visible.
func (p *Page) WaitVisible(sel string) {
	p.tb.Helper()
	p.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

// WaitFor waits until the JavaScript expression is truthy in the page. It
// evaluates through the DevTools protocol, so it works under a CSP that
// forbids eval.
func (p *Page) WaitFor(expr string) {
	p.tb.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		ok, err := evaluate[bool](p.ctx, "!!("+expr+")")
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("browsertest: %s did not become true (last error: %v)%s", expr, err, p.consoleTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Text returns the text content of the first element matching the CSS
// selector, trimmed.
func (p *Page) Text(sel string) string {
	p.tb.Helper()
	got, err := evaluate[*string](p.ctx, "(function(){var e=document.querySelector("+jsString(sel)+");return e?e.textContent:null})()")
	if err != nil {
		p.tb.Fatalf("browsertest: text of %s: %v%s", sel, err, p.consoleTail())
	}
	if got == nil {
		p.tb.Fatalf("browsertest: no element matches %s", sel)
	}
	return strings.TrimSpace(*got)
}

// Texts returns Text of each selector, keyed by selector.
func (p *Page) Texts(sels ...string) map[string]string {
	p.tb.Helper()
	out := make(map[string]string, len(sels))
	for _, s := range sels {
		out[s] = p.Text(s)
	}
	return out
}

// Eval evaluates a JavaScript expression in the page, waits for it when it
// is a promise, and decodes its JSON value into T. A thrown exception or
// a rejected promise fails the test; use EvalErr to observe them.
func Eval[T any](p *Page, expr string) T {
	p.tb.Helper()
	v, err := EvalErr[T](p, expr)
	if err != nil {
		p.tb.Fatalf("browsertest: evaluate %s: %v%s", expr, err, p.consoleTail())
	}
	return v
}

// EvalErr is Eval returning the page's exception or rejection as an error.
func EvalErr[T any](p *Page, expr string) (T, error) {
	return evaluate[T](p.ctx, expr)
}

func evaluate[T any](ctx context.Context, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// Console returns the console messages, uncaught exceptions and browser
// log entries the tab reported so far.
func (p *Page) Console() []ConsoleMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ConsoleMessage(nil), p.console...)
}

// Violations returns the CSP violations the tab reported so far.
func (p *Page) Violations() []Violation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Violation(nil), p.violations...)
}

// WaitViolation waits until the tab has reported a CSP violation for which
// match returns true, and returns it; it fails the test after Timeout.
// Violations are reported asynchronously, so a test that made a request
// the policy blocks waits here before asserting on them.
func (p *Page) WaitViolation(match func(Violation) bool) Violation {
	p.tb.Helper()
	return waitFor(p, "CSP violation", func() []Violation { return p.violations }, match)
}

// WaitConsole waits until the tab has reported a console message for
// which match returns true, and returns it; it fails the test after
// Timeout. The browser logs each CSP violation as an error with Source
// "security".
func (p *Page) WaitConsole(match func(ConsoleMessage) bool) ConsoleMessage {
	p.tb.Helper()
	return waitFor(p, "console message", func() []ConsoleMessage { return p.console }, match)
}

// waitFor waits until list (read under p.mu) holds an item match accepts.
func waitFor[T any](p *Page, what string, list func() []T, match func(T) bool) T {
	p.tb.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		for _, v := range list() {
			if match(v) {
				p.mu.Unlock()
				return v
			}
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			p.tb.Fatalf("browsertest: no matching %s was reported; violations: %+v%s", what, p.Violations(), p.consoleTail())
			var zero T
			return zero
		}
	}
}

// consoleTail formats the last console messages for a failure message.
func (p *Page) consoleTail() string {
	msgs := p.Console()
	if len(msgs) == 0 {
		return ""
	}
	if len(msgs) > 10 {
		msgs = msgs[len(msgs)-10:]
	}
	var b strings.Builder
	b.WriteString("\nconsole:")
	for _, m := range msgs {
		b.WriteString("\n  " + m.String())
	}
	return b.String()
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
