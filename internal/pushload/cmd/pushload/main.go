// Command pushload sends signed gift card pushes to a running push
// listener (paydesk listen) from parallel keep-alive connections and
// prints the rate and latencies it answered with:
//
//	PAYDESK_SECRET_KEY=s3cret go run ./internal/pushload/cmd/pushload -addr 127.0.0.1:8801 -website-key KEY
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"time"

	"paydesk/api"
	"paydesk/internal/pushload"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8801", "the listener's host:port")
	pushURL := flag.String("push-url", "", "URL the pushes are signed over and posted to (default http://ADDR/push)")
	websiteKey := flag.String("website-key", "", "website key to sign with (the secret comes from $PAYDESK_SECRET_KEY)")
	pushes := flag.Int("n", 100000, "pushes to send")
	senders := flag.Int("c", 128, "parallel senders, one connection each")
	randomKeys := flag.Bool("random-keys", false, "random transaction keys instead of rising ones")
	flag.Parse()
	secret := os.Getenv("PAYDESK_SECRET_KEY")
	if *websiteKey == "" || secret == "" {
		fmt.Fprintln(os.Stderr, "pushload: needs -website-key and $PAYDESK_SECRET_KEY (the listener's credentials)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	fmt.Fprintf(os.Stderr, "pushload: signing %d pushes...\n", *pushes)
	reqs, err := pushload.Prepare(pushload.Plan{Addr: *addr, PushURL: *pushURL, Pushes: *pushes, RandomKeys: *randomKeys,
		// Numbered from the clock, so a second run stores new pushes
		// rather than duplicates of the first run's.
		First:       int(time.Now().UnixMicro() % 1e15),
		Credentials: api.Credentials{WebsiteKey: *websiteKey, SecretKey: secret}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pushload: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "pushload: sending from %d connections to %s...\n", *senders, *addr)
	res, runErr := pushload.Run(ctx, *addr, reqs, *senders)
	fmt.Printf("%d pushes answered of %d sent in %.2f s: %.0f pushes/s\n", len(res.Latencies), res.Sent, res.Elapsed.Seconds(), res.PerSecond())
	fmt.Printf("latency p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n",
		ms(res.Percentile(50)), ms(res.Percentile(90)), ms(res.Percentile(99)), ms(res.Percentile(100)))
	codes := make([]int, 0, len(res.Statuses))
	for c := range res.Statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	fmt.Print("answers:")
	for _, c := range codes {
		fmt.Printf("  %d × %d", res.Statuses[c], c)
	}
	fmt.Println()
	if runErr != nil {
		fmt.Fprintf(os.Stderr, "pushload: %v\n", runErr)
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
