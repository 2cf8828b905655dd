package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// strictCSP is the policy the service is meant to send: the page must work
// under it, so the tests serve it.
const strictCSP = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"

// pageWait bounds every wait for the page; a run of a few small mailboxes
// takes seconds.
const pageWait = 60 * time.Second

// findChromium finds Debian's chromium (or Ubuntu's chromium-browser). A
// missing browser fails the test: `make test` installs it.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatal("no chromium or chromium-browser on PATH: run .ci/system-deps chromium")
	return ""
}

// startBrowser runs one headless Chromium for the whole test binary's
// browser tests; each test opens its own tab in a fresh browser context
// (its own sessionStorage), which is much cheaper than a browser each.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(findChromium(t)),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to start its sandbox as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return browserCtx
}

// site is the service under test behind a front server that adds the
// strict CSP, can require an API token, and can drop every WebSocket.
type site struct {
	*servicetest.Service
	front string // the root of the front server, which the browser visits
	token string // when set, the service requires it

	mu         sync.Mutex
	sockets    []net.Conn
	gets       map[string]int // GET requests by path
	tokenInURL int            // event streams opened with the token in their URL
	apiDown    bool           // API requests get their connection closed, as when the service is down
}

func startSite(t *testing.T, token string) *site {
	t.Helper()
	return startSiteWith(t, token, servicetest.Options{})
}

// startSiteWith is startSite with the service tuned, e.g. its workers.
func startSiteWith(t *testing.T, token string, opts servicetest.Options) *site {
	t.Helper()
	opts.APIToken = token
	s := &site{Service: servicetest.Start(t, opts), token: token, gets: map[string]int{}}
	front := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(front.Close)
	s.front = front.URL
	return s
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", strictCSP)
	s.mu.Lock()
	if r.Method == http.MethodGet {
		s.gets[r.URL.Path]++
		if r.URL.Query().Has("access_token") {
			s.tokenInURL++
		}
	}
	down := s.apiDown && strings.HasPrefix(r.URL.Path, "/api/")
	s.mu.Unlock()
	if down {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	s.App.Handler.ServeHTTP(recordingHijacks{ResponseWriter: w, site: s}, r)
}

// setAPIDown makes the API unreachable (true) or reachable again.
func (s *site) setAPIDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiDown = down
}

// tokenInURLCount is how many requests carried the token in their URL.
func (s *site) tokenInURLCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenInURL
}

// getCount is how many GET requests the path has had.
func (s *site) getCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[path]
}

// dropSockets closes every WebSocket connection, as a restart or a flaky
// network would.
func (s *site) dropSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.sockets {
		c.Close()
	}
	s.sockets = nil
}

// recordingHijacks keeps the connections that WebSockets take over.
type recordingHijacks struct {
	http.ResponseWriter
	site *site
}

func (w recordingHijacks) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.site.mu.Lock()
		w.site.sockets = append(w.site.sockets, conn)
		w.site.mu.Unlock()
	}
	return conn, rw, err
}

// recordProblems is injected before the page's own scripts: it keeps every
// CSP violation, which the tests require to be none.
const recordProblems = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`

// tab is one browser tab on the site.
type tab struct {
	ctx  context.Context
	t    *testing.T
	site *site

	mu         sync.Mutex
	exceptions []string
}

// openTab opens a tab in its own browser context; it fails the test if the
// page threw an uncaught exception or broke the CSP.
func openTab(t *testing.T, browser context.Context, s *site) *tab {
	t.Helper()
	tb := &tab{t: t, site: s}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext(), chromedp.WithListener(tb.recordException))
	tb.ctx = ctx
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordProblems}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var violations []string
		if ctx.Err() == nil {
			violations, _ = chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__cspViolations || []`))
		}
		if len(violations) > 0 {
			t.Errorf("CSP violations: %v", violations)
		}
		tb.mu.Lock()
		if len(tb.exceptions) > 0 {
			t.Errorf("uncaught exceptions in the page: %v", tb.exceptions)
		}
		tb.mu.Unlock()
		cancel()
	})
	return tb
}

// recordException keeps the page's uncaught exceptions.
func (tb *tab) recordException(ev any) {
	e, ok := ev.(*runtime.EventExceptionThrown)
	if !ok {
		return
	}
	text := e.ExceptionDetails.Text
	if e.ExceptionDetails.Exception != nil {
		text += " " + e.ExceptionDetails.Exception.Description
	}
	tb.mu.Lock()
	tb.exceptions = append(tb.exceptions, text)
	tb.mu.Unlock()
}

func (tb *tab) run(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, pageWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.screenshot("failure")
		tb.t.Fatal(err)
	}
}

// open loads the page afresh at a route, e.g. "#/endpoints".
func (tb *tab) open(route string) {
	tb.t.Helper()
	url := tb.site.front + "/" + route
	load := chromedp.Navigate(url)
	// Navigating to the URL the tab shows only changes the hash: no load.
	if current, err := chromedp.Run(tb.ctx, chromedp.Location()); err == nil && current == url {
		load = chromedp.Reload()
	}
	tb.run(load, chromedp.WaitVisible(chromedp.CSS(`main .view:not([aria-busy])`)))
}

// waitText waits until the element sel exists and its text contains want.
func (tb *tab) waitText(sel, want string) {
	tb.t.Helper()
	tb.waitJS(fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? '').includes(%s)`, quote(sel), quote(want)),
		fmt.Sprintf("%s to say %q", sel, want))
}

// waitJS waits until the JavaScript expression is true.
func (tb *tab) waitJS(expr, what string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, pageWait)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		tb.screenshot("failure")
		// A page without a main (not the console's) must not hang the
		// report.
		textCtx, cancelText := context.WithTimeout(tb.ctx, 5*time.Second)
		defer cancelText()
		text, _ := chromedp.Run(textCtx, chromedp.Text(chromedp.CSS("main")))
		tb.t.Fatalf("waiting for %s: %v\npage text:\n%s", what, err, text)
	}
}

// text is the text of the first element matching sel.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return evaluate[string](tb, fmt.Sprintf(`document.querySelector(%s).textContent`, quote(sel)))
}

// evaluate evaluates a JavaScript expression in the tab.
func evaluate[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, pageWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// fill sets form fields by selector, and the page hears each typed, as a
// person's typing is heard (an input event).
func (tb *tab) fill(values map[string]string) {
	tb.t.Helper()
	for sel, value := range values {
		tb.run(chromedp.SetValue(chromedp.CSS(sel), value))
		evaluate[bool](tb, `document.querySelector(`+quote(sel)+`).dispatchEvent(new Event('input', {bubbles: true}))`)
	}
}

// choose picks value in the select sel as a person does: the page hears
// a change (fill sets the value alone).
func (tb *tab) choose(sel, value string) {
	tb.t.Helper()
	evaluate[bool](tb, `(() => { const m = document.querySelector(`+quote(sel)+`);
		m.value = `+quote(value)+`; return m.dispatchEvent(new Event('change')); })()`)
}

// click clicks the element sel. A live redraw can replace the element
// between chromedp's query and its click ("Could not find node with given
// id"): a person would click the new one, so the click is tried again on
// it, a few times.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(tb.ctx, pageWait)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		var cdpErr *cdproto.Error
		if err == nil || try == 3 || !errors.As(err, &cdpErr) || cdpErr.Code != cdpServerError {
			if err != nil {
				tb.screenshot("failure")
				tb.t.Fatal(err)
			}
			return
		}
	}
}

// clickUntil clicks sel until the JavaScript expression done holds, up to
// three clicks a few seconds apart, then waits for it as waitJS does. A
// live redraw that moves the element between chromedp's reading of its
// place and the mouse's press lands the click elsewhere, as a person's
// would: on a busy page (progress redrawing the rows) a person clicks
// again too.
func (tb *tab) clickUntil(sel, done, what string) {
	tb.t.Helper()
	for try := 1; try < 3; try++ {
		tb.click(sel)
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](done, chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
	}
	tb.click(sel)
	tb.waitJS(done, what)
}

// typeUntil types keys into sel until the JavaScript expression done
// holds, up to three times a few seconds apart, then waits for it as
// waitJS does: keys typed while a redraw replaces the field go to the old
// one, as a person's would, and a person types again.
func (tb *tab) typeUntil(sel, keys, done, what string) {
	tb.t.Helper()
	for try := 1; try < 3; try++ {
		tb.run(chromedp.SendKeys(sel, keys))
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](done, chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
	}
	tb.run(chromedp.SendKeys(sel, keys))
	tb.waitJS(done, what)
}

// cdpServerError is the DevTools protocol's code of a node gone.
const cdpServerError = -32000

// confirm answers the page's confirmation dialog, after checking its question.
func (tb *tab) confirm(question string, yes bool) {
	tb.t.Helper()
	tb.waitText("dialog[open] #confirm-question", question)
	if yes {
		tb.click("dialog[open] #confirm-ok")
	} else {
		tb.click("dialog[open] #confirm-cancel")
	}
	tb.waitJS(`document.querySelector('dialog[open]') === null`, "the dialog to close")
}

// screenshot saves the whole page as an artifact (go test -artifacts).
func (tb *tab) screenshot(name string) {
	ctx, cancel := context.WithTimeout(tb.ctx, pageWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100 makes a PNG
	if err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(tb.t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
	}
}

// phoneWidth narrows the tab to a phone's viewport for a screenshot.
func (tb *tab) phoneWidth() {
	tb.t.Helper()
	tb.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// createEndpoint registers an endpoint through the API.
func (s *site) createEndpoint(t *testing.T, in api.EndpointInput) int64 {
	t.Helper()
	resp, err := s.Client.CreateEndpointWithResponse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create endpoint: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201.Id
}

// createTask creates a task through the API.
func (s *site) createTask(t *testing.T, name string, src, dst int64) int64 {
	t.Helper()
	resp, err := s.Client.CreateTaskWithResponse(context.Background(), api.TaskInput{Name: name, SourceEndpointId: src, DestinationEndpointId: dst})
	if err != nil {
		t.Fatal(err)
	}
	if resp.JSON201 == nil {
		t.Fatalf("create task: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.JSON201.Id
}

// importNumbered imports n accounts whose logins are format with their
// number (user%04d), all with the password pw.
func (s *site) importNumbered(t *testing.T, taskID int64, format string, n int) {
	t.Helper()
	var csv strings.Builder
	for i := range n {
		fmt.Fprintf(&csv, format+",pw\n", i)
	}
	resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader(csv.String()))
	if err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}
}

// aliceTask starts two Dovecots with the mailbox alice, loads the source
// one with a corpus (seed, messages), and makes a task named name between
// them with alice's account.
func (s *site) aliceTask(t *testing.T, name string, seed int64, messages int) (old, neu *imaptest.Dovecot, taskID int64) {
	t.Helper()
	users := map[string]string{"alice": "a"}
	old = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	neu = imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	old.Load(t, "alice", imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: seed, Messages: messages}))
	src := s.createEndpoint(t, api.EndpointInput{Host: old.Host, Port: old.Port, TlsMode: api.TLSModePlain})
	dst := s.createEndpoint(t, api.EndpointInput{Host: neu.Host, Port: neu.Port, TlsMode: api.TLSModePlain})
	taskID = s.createTask(t, name, src, dst)
	resp, err := s.Client.ImportAccountsWithBodyWithResponse(context.Background(), taskID, "text/csv", strings.NewReader("alice,a\n"))
	if err != nil || resp.StatusCode() != http.StatusCreated {
		t.Fatalf("import: %v %v", err, resp)
	}
	return old, neu, taskID
}
