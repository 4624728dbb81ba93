// Package browsertest drives a real headless Chromium from Go tests, so
// that generated artifacts are checked where they run: in a browser,
// under their Content-Security-Policy.
//
// It owns finding the browser (Find, Require), starting one per test
// (New), and a Page per tab with helpers that fail the test on error:
// Navigate, WaitVisible, WaitFor, Text, Texts, Eval. A Page collects what
// the tab reports while it runs: console messages, uncaught exceptions and
// browser log entries (Console, WaitConsole; the browser logs each CSP
// violation with Source "security"), and Content-Security-Policy violations
// (Violations, WaitViolation), gathered from securitypolicyviolation
// events by a listener installed before any page script runs.
// ServeArtifact serves an artifact's program files with a snapshot
// injected at the injection point under CSP, as a stand-in for selmem's
// own artifact server in tests of programs.
//
// The browser is looked for at $SELMEM_CHROMIUM, else as chromium,
// chromium-browser, google-chrome or google-chrome-stable on PATH, and
// runs headless with --no-sandbox --disable-gpu (tests often run as root
// in containers, where Chromium's sandbox cannot start). When no browser
// is found, Require skips the test with a message saying how to install
// one (sudo scripts/install-chromium.sh); with CI=true it fails instead,
// so CI cannot silently skip browser tests.
//
// The package does not install the browser and knows nothing of
// bindings, snapshots or refreshes.
package browsertest
