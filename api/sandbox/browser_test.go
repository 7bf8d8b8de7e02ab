//go:build unix

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"paydesk/api"
)

// browser drives a headless Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on fd 3, answers on fd 4, each message
// ended by a NUL byte), so no WebSocket library is needed.
type browser struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   *os.File // we write commands here (the browser's fd 3)
	out  *bufio.Reader
	mu   sync.Mutex
	next int
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin := findChromium()
	if bin == "" {
		t.Skip("chromium not installed (apt-get install -y chromium)")
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW}               // fd 3 and fd 4 in the browser
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers end with it
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cmdR.Close()
	outW.Close()
	b := &browser{t: t, cmd: cmd, in: cmdW, out: bufio.NewReader(outR)}
	t.Cleanup(func() {
		// Ask it to close, then end its process group (the browser and
		// the helpers it started, nothing else) before the profile folder
		// is removed.
		_, _ = cmdW.Write([]byte(`{"id":999999,"method":"Browser.close"}` + "\x00"))
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		cmdW.Close()
		outR.Close()
	})
	return b
}

// call sends one command (to a page when session is set) and waits for its
// answer, skipping events.
func (b *browser) call(session, method string, params any) json.RawMessage {
	b.t.Helper()
	res, msg := b.send(session, method, params)
	if msg != "" {
		b.t.Fatalf("%s: %s", method, msg)
	}
	return res
}

// send is call that hands back the browser's error message instead of
// failing the test: a page being replaced answers Runtime.evaluate with
// "Inspected target navigated or closed", which a poll simply retries.
func (b *browser) send(session, method string, params any) (json.RawMessage, string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	id := b.next
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
	deadline := time.Now().Add(stuck)
	for time.Now().Before(deadline) {
		line, err := b.out.ReadBytes(0)
		if err != nil {
			b.t.Fatalf("%s: reading the browser: %v", method, err)
		}
		var ans struct {
			ID     int
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(line[:len(line)-1], &ans); err != nil || ans.ID != id {
			continue // an event, or another answer
		}
		if ans.Error != nil {
			return nil, ans.Error.Message
		}
		return ans.Result, ""
	}
	b.t.Fatalf("%s: no answer", method)
	return nil, ""
}

// open makes a tab at url and returns its session.
func (b *browser) open(url string) string {
	var target struct{ TargetID string }
	_ = json.Unmarshal(b.call("", "Target.createTarget", map[string]any{"url": url}), &target)
	var att struct{ SessionID string }
	_ = json.Unmarshal(b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &att)
	return att.SessionID
}

// eval runs a JavaScript expression in the page and returns its string
// value ("" when it throws, e.g. while the page is being replaced).
func (b *browser) eval(session, expr string) string {
	var r struct {
		Result struct{ Value any }
	}
	res, _ := b.send(session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	_ = json.Unmarshal(res, &r)
	s, _ := r.Result.Value.(string)
	return s
}

// waitFor polls expr until it returns a string containing want.
func (b *browser) waitFor(session, expr, want string) string {
	b.t.Helper()
	var got string
	for deadline := time.Now().Add(stuck); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = b.eval(session, expr); strings.Contains(got, want) {
			return got
		}
	}
	b.t.Fatalf("waited for %q in %q, got %q", want, expr, got)
	return ""
}

// stubShop is the shop's return page: it verifies the reply the browser
// posts with the family's form signature and shows what it found.
type stubShop struct {
	srv    *httptest.Server
	mu     sync.Mutex
	posted []string
}

func newStubShop(t *testing.T, secret string) *stubShop {
	sh := &stubShop{}
	sh.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "the gateway returns the customer with a POST", http.StatusMethodNotAllowed)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		verdict := "verified"
		if err := api.VerifyReply(r.PostForm, secret); err != nil {
			verdict = "REFUSED " + err.Error()
		}
		line := fmt.Sprintf("%s %s status=%s key=%s number=%s order=%s add=%s", r.URL.Path, verdict,
			r.PostForm.Get("brq_statuscode"), r.PostForm.Get("brq_datarequest"),
			r.PostForm.Get("brq_SERVICE_deferredkp_ReservationNumber"), r.PostForm.Get("brq_ordernumber"),
			r.PostForm.Get("add_initiated_by"))
		sh.mu.Lock()
		sh.posted = append(sh.posted, line)
		sh.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>shop</title><p id=result>%s</p>", line)
	}))
	t.Cleanup(sh.srv.Close)
	return sh
}

// A real browser from the checkout page to the shop: the customer clicks
// Approve (or Cancel), the browser posts the signed reply to the return
// page the shop named, and the shop verifies it.
func TestBrowserCheckoutReturnsToShop(t *testing.T) {
	b := startBrowser(t)
	e := newEnv(t, nil)
	shop := newStubShop(t, testCreds.SecretKey)
	for _, c := range []struct {
		button, path, status string
	}{
		{"approve", "/return", "190"},
		{"cancel", "/cancelled", "890"},
		{"decline", "/rejected", "690"},
	} {
		t.Run(c.button, func(t *testing.T) {
			b.t = t
			req := reserveOp("INV-BROWSER-"+c.button, "Jansen").Request()
			req.ReturnURL = shop.srv.URL + "/return"
			req.ReturnURLCancel = shop.srv.URL + "/cancelled"
			req.ReturnURLReject = shop.srv.URL + "/rejected"
			req.Order = "ORDER_NO_" + c.button
			req.AdditionalParameters = &api.ParamList{AdditionalParameter: []api.NameValue{{Name: "initiated_by", Value: "browser test"}}}
			resp, err := e.client.Do(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			tab := b.open(resp.RequiredAction.RedirectURL)
			b.waitFor(tab, `document.readyState + " " + document.title`, "complete Checkout")
			b.eval(tab, `document.getElementById("`+c.button+`").click(); "clicked"`)
			got := b.waitFor(tab, `(document.getElementById("result") || {}).textContent || ""`, c.path+" ")
			want := fmt.Sprintf("%s verified status=%s key=%s", c.path, c.status, resp.Key)
			if !strings.Contains(got, want) || !strings.Contains(got, "order=ORDER_NO_"+c.button) || !strings.Contains(got, "add=browser test") {
				t.Fatalf("the shop's return page shows %q, want %q with the order and add_ field", got, want)
			}
			if c.status == "190" && strings.Contains(got, "number= ") {
				t.Fatalf("no reservation number: %q", got)
			}
		})
	}
}
