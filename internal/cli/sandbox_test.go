package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
)

// lockedBuffer is a bytes.Buffer safe for the command's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestSandboxCommandServesAndStops(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }},
			[]string{"sandbox", "--addr", "127.0.0.1:0", "--website-key", "WK", "--secret-file", secretFile, "--seed", "5"})
	}()
	base := regexp.MustCompile(`listening on (http://\S+)`)
	var url string
	// The banner comes in several writes: wait for the URL and the seeded
	// cards (the last of it), not for its first line.
	for deadline := time.Now().Add(2 * time.Minute); ; { // only a stuck test
		out := stdout.String()
		m := base.FindStringSubmatch(out)
		if m != nil && strings.Contains(out, "6299440000000000015") && strings.Contains(out, api.TestCardNumber) {
			url = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no base URL and seeded cards printed:\n%s\nstderr: %s", out, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cl, err := api.NewClient(api.Config{BaseURL: url, Credentials: api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Send(ctx, api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "I-1", Amount: decimal.NewFromInt(5),
		Card: api.Card{Provider: api.ProviderB, Number: api.TestCardNumber, PIN: "1000"}})
	if err != nil || resp.Status.Code.Code != api.StatusSuccess {
		t.Fatalf("Pay through the command: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d; stderr: %s", code, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no clean shutdown")
	}
	logs := stderr.String()
	if !strings.Contains(logs, "POST /json/Transaction Pay http=200 status=190 key="+resp.Key) || !strings.Contains(logs, "stopped") {
		t.Fatalf("log lines:\n%s", logs)
	}
	if strings.Contains(logs+stdout.String(), "s3cret") {
		t.Fatal("the secret was printed")
	}
}

func TestSandboxCommandNeedsSecretAndKey(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"sandbox", "--website-key", "WK"}, nil, "PAYDESK_SECRET_KEY"},
		{[]string{"sandbox"}, map[string]string{"PAYDESK_SECRET_KEY": "x"}, "--website-key"},
		{[]string{"sandbox", "--secret", "x"}, nil, "nknown flag: --secret"},
	} {
		var stderr lockedBuffer
		code := Main(context.Background(), IO{Stdout: &stderr, Stderr: &stderr, Getenv: func(k string) string { return tc.env[k] }}, tc.args)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, output %q", tc.args, code, stderr.String())
		}
	}
}

// Every chaos spec the sandbox's help shows is one the parser takes.
func TestSandboxHelpChaosExamplesParse(t *testing.T) {
	code, out, errs := run(t, t.TempDir(), "sandbox", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	specs := regexp.MustCompile(`seed=[^\s()]+`).FindAllString(out, -1)
	if len(specs) == 0 {
		t.Fatalf("no chaos example in the help:\n%s", out)
	}
	for _, spec := range specs {
		if _, err := sandbox.ParseChaos(spec); err != nil {
			t.Errorf("the help's example %q: %v", spec, err)
		}
	}
}
