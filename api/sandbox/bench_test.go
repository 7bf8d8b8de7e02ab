package sandbox

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"paydesk/api"
)

// BenchmarkSandboxPay sends signed gift card Pay requests with the test
// card through net/http on loopback from parallel clients: each request is
// signed, verified, decoded, validated, booked with its push queued, and
// answered with a signed response that the client verifies. Pushes wait in
// the in-memory outbox (no push URL), so the figure is the gateway's own.
func BenchmarkSandboxPay(b *testing.B) {
	sb, err := New(Config{Credentials: []api.Credentials{testCreds}, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	defer transport.CloseIdleConnections()
	client, err := api.NewClient(api.Config{BaseURL: "http://" + ln.Addr().String(), Credentials: testCreds, HTTP: &http.Client{Transport: transport}})
	if err != nil {
		b.Fatal(err)
	}
	op := api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-BENCH", Amount: dec("12.5"), Card: testCard("5000")}
	ctx := context.Background()
	b.SetParallelism(8) // clients per core
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Send(ctx, op)
			if err != nil || resp.Status.Code.Code != api.StatusSuccess {
				b.Errorf("Pay: %v", err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
