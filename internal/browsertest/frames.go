package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// frameID finds, depth first, the frame whose name (its iframe's name
// attribute) is name.
func frameID(ctx context.Context, name string) (cdp.FrameID, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return "", err
	}
	var find func(t *page.FrameTree) cdp.FrameID
	find = func(t *page.FrameTree) cdp.FrameID {
		if t == nil {
			return ""
		}
		if t.Frame != nil && t.Frame.Name == name {
			return t.Frame.ID
		}
		for _, c := range t.ChildFrames {
			if id := find(c); id != "" {
				return id
			}
		}
		return ""
	}
	if id := find(tree.FrameTree); id != "" {
		return id, nil
	}
	var names []string
	var walk func(t *page.FrameTree, depth int)
	walk = func(t *page.FrameTree, depth int) {
		if t == nil || t.Frame == nil {
			return
		}
		names = append(names, fmt.Sprintf("%d:%q(%s)", depth, t.Frame.Name, t.Frame.URL))
		for _, c := range t.ChildFrames {
			walk(c, depth+1)
		}
	}
	walk(tree.FrameTree, 0)
	return "", fmt.Errorf("no frame is named %q (frames: %v)", name, names)
}

// EvalInFrame evaluates a JavaScript expression in the frame named name
// (an iframe's name attribute, at any depth), in a world of its own that
// shares the frame's DOM but not its scripts' globals, waits for it when it
// is a promise, and decodes its JSON value into T. It reaches frames the
// page itself cannot (sandboxed, other origins), so a test can read what a
// nested frame shows.
func EvalInFrame[T any](p *Page, name, expr string) (T, error) {
	var zero T
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	id, err := frameID(ctx, name)
	if err != nil {
		return zero, err
	}
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: id, WorldName: "browsertest"})
	if err != nil {
		return zero, err
	}
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: world.ExecutionContextID, ReturnByValue: ptr(true), AwaitPromise: ptr(true)})
	if err != nil {
		return zero, err
	}
	if res.ExceptionDetails != nil {
		d := res.ExceptionDetails
		if d.Exception != nil && d.Exception.Description != "" {
			return zero, fmt.Errorf("exception: %s", d.Exception.Description)
		}
		return zero, fmt.Errorf("exception: %s", d.Text)
	}
	var v T
	if res.Result == nil || len(res.Result.Value) == 0 {
		return zero, fmt.Errorf("%s has no JSON value", expr)
	}
	if err := json.Unmarshal(res.Result.Value, &v); err != nil {
		return zero, err
	}
	return v, nil
}

// WaitInFrame waits until the expression is truthy in the frame named
// name (see EvalInFrame); it fails the test after Timeout.
func (p *Page) WaitInFrame(name, expr string) {
	p.tb.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		ok, err := EvalInFrame[bool](p, name, "!!("+expr+")")
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			p.tb.Fatalf("browsertest: in frame %s, %s did not become true (last error: %v)%s", name, expr, err, p.consoleTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SetViewport sets the tab's viewport to width × height CSS pixels.
func (p *Page) SetViewport(width, height int64) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: width, Height: height, DeviceScaleFactor: 1}); err != nil {
		p.tb.Fatalf("browsertest: set the viewport: %v", err)
	}
}

// Screenshot returns a PNG of the tab's viewport.
func (p *Page) Screenshot() []byte {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		p.tb.Fatalf("browsertest: screenshot: %v", err)
	}
	return res.Data
}

func ptr[T any](v T) *T { return &v }

// AddScript has the tab run src in every document it loads from now on,
// frames included, before the document's own scripts (the DevTools
// protocol's Page.addScriptToEvaluateOnNewDocument).
func (p *Page) AddScript(src string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		p.tb.Fatalf("browsertest: add a script: %v", err)
	}
}
