package inbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium through chromedp. Without
// chromium they skip, except in CI (CI set), where they fail: .ci/run
// installs it.

// ScreenshotsEnv names the directory that receives the screenshots of the
// browser tests (default: the test's temporary directory).
const ScreenshotsEnv = "INBOX_SCREENSHOTS"

func chromePath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; CI must install it (.ci/run does: apt-get install chromium)")
	}
	t.Skip("chromium is not installed; the browser tests run in CI")
	return ""
}

func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(ScreenshotsEnv)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless chromium tab, and what its console said that a
// test must not accept: uncaught exceptions and CSP or Trusted Types
// violations.
type browser struct {
	t        *testing.T
	ctx      context.Context
	shots    string
	mu       sync.Mutex
	problems []string
}

func openBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromePath(t)), chromedp.NoSandbox, chromedp.WindowSize(1100, 760))
	ctx, cancelTime := context.WithTimeout(context.Background(), 50*time.Second)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancelTime() })
	b := &browser{t: t, ctx: bctx, shots: screenshotDir(t)}
	go b.watch(chromedp.Console(bctx))
	return b
}

func (b *browser) watch(msgs func(func(chromedp.ConsoleMessage, error) bool)) {
	for m, err := range msgs {
		if err != nil {
			return
		}
		if m.IsException() || strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Trusted") {
			b.mu.Lock()
			b.problems = append(b.problems, m.String())
			b.mu.Unlock()
		}
	}
}

// checkConsole fails the test if the page threw or broke its policy.
func (b *browser) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("browser console: %s", p)
	}
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.checkConsole()
		b.t.Fatalf("browser: %v", err)
	}
}

// wait polls a JavaScript condition until it holds (10s at most).
func (b *browser) wait(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		b.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
		b.checkConsole()
		b.t.Fatalf("browser: waiting until %s (%s): %v", what, cond, err)
	}
}

func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: %s: %v", expr, err)
	}
	return v
}

// shot saves a screenshot of the whole page as inbox-name.png.
func (b *browser) shot(name string) { b.t.Helper(); b.save(name, chromedp.FullScreenshot(100)) }

// screen saves a screenshot of what the screen shows (the viewport) as
// inbox-name.png: what a person sees first, with what stays in sight.
func (b *browser) screen(name string) { b.t.Helper(); b.save(name, chromedp.CaptureScreenshot()) }

func (b *browser) save(name string, capture chromedp.Action[[]byte]) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, capture)
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(b.shots, "inbox-"+name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
}
