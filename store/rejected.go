package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Bounds of the evidence kept of one rejected request: the rejected log is
// fed by anyone on the internet, so what it keeps of a request must not
// depend on what the request sent.
const (
	// MaxRejectedExcerpt is the most of a rejected body kept; its size and
	// SHA-256 are kept in full (BodySize, Hash).
	MaxRejectedExcerpt = 256
	// maxRejectedHeader bounds one header value kept, maxRejectedHeaders
	// the number of header fields.
	maxRejectedHeader  = 200
	maxRejectedHeaders = 12
	// rejectedRetention is how long a group must have been quiet before a
	// new source may take its place in a full log.
	rejectedRetention = 7 * 24 * time.Hour
	// OtherSources is the source of the overflow groups: rejections from
	// new sources once the log holds MaxRejected groups none of which is
	// older than the retention.
	OtherSources = "(other sources)"
)

// RejectedEvidence bounds rec to what the rejected log keeps of a request:
// the body's first MaxRejectedExcerpt bytes, its size and SHA-256, and a
// few header values cut short. The listener calls it before it stores
// anything; RecordRejectedPush calls it again to be sure.
func RejectedEvidence(rec PushRecord) PushRecord {
	if rec.BodySize == 0 {
		rec.BodySize = len(rec.Body)
		rec.Hash = sha256.Sum256(rec.Body)
	}
	if len(rec.Body) > MaxRejectedExcerpt {
		rec.Body = append([]byte(nil), rec.Body[:MaxRejectedExcerpt]...)
	}
	if len(rec.Header) > 0 {
		h := make(http.Header, min(len(rec.Header), maxRejectedHeaders))
		for _, k := range []string{"Authorization", "Content-Type", "Content-Length", "Transfer-Encoding", "User-Agent", "X-Forwarded-For", "Forwarded"} {
			if v := rec.Header.Get(k); v != "" {
				h.Set(k, cut(v, maxRejectedHeader))
			}
		}
		rec.Header = h
	}
	rec.URL = cut(rec.URL, maxRejectedHeader)
	rec.Reason = cut(rec.Reason, 300)
	rec.WebsiteKey = cut(rec.WebsiteKey, 64)
	rec.RemoteAddr = cut(rec.RemoteAddr, 64)
	for _, f := range []*string{&rec.Envelope, &rec.Key, &rec.Invoice, &rec.Service, &rec.Kind, &rec.Currency} {
		*f = cut(*f, 64)
	}
	return rec
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// RejectedSource is the source a rejection is counted under: the remote
// host without its port, an IPv6 address by its /64 (one machine usually
// holds a whole /64).
func RejectedSource(remoteAddr string) string {
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() && !a.Is4In6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return host
}

// rejectedClass is what a rejection is counted under besides its source:
// the signature verdict and the reason up to its first colon ("signature",
// "malformed body", "body larger than 1 MiB"), not the details after it,
// which an attacker chooses.
func rejectedClass(rec *PushRecord) string {
	reason, _, _ := strings.Cut(rec.Reason, ":")
	return rec.Signature + "\x00" + cut(reason, 40)
}

// RecordRejectedPush keeps a request that was refused (bad signature,
// malformed body, too large) in the rejected log, bounded in bytes
// (RejectedEvidence) and aggregated: one entry per source and kind of
// rejection (RejectedGroup), with the first request's evidence, a count and
// the time of the last one, moved to the top of the log each time it grows.
// A flood from one source therefore updates one entry and cannot push
// evidence of earlier attempts out of the log; once it holds MaxRejected
// entries, a new source takes the place of one quiet for a week, or else is
// counted under OtherSources. It changes nothing else. Group-committed like
// ApplyPush. rec.Count > 1 stands for that many requests (the listener
// coalesces a flood before it writes), rec.LastSeen for the last of them.
func (db *DB) RecordRejectedPush(ctx context.Context, rec PushRecord) (uint64, error) {
	ids, err := db.RecordRejectedPushes(ctx, []PushRecord{rec})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// RecordRejectedPushes is RecordRejectedPush for several records in one
// commit; it returns the entries' IDs in the order of recs.
func (db *DB) RecordRejectedPushes(ctx context.Context, recs []PushRecord) ([]uint64, error) {
	prepared := make([]PushRecord, len(recs))
	for i, rec := range recs {
		rec = RejectedEvidence(rec)
		rec.Rejected = true
		if rec.ReceivedAt.IsZero() {
			rec.ReceivedAt = db.now()
		}
		rec.Count = max(rec.Count, 1)
		if rec.LastSeen.IsZero() {
			rec.LastSeen = rec.ReceivedAt
		}
		prepared[i] = rec
	}
	ids := make([]uint64, len(recs))
	err := db.batch.do(ctx, func(tx RepoTx, c *Change) error {
		for i := range prepared {
			source, class := RejectedSource(prepared[i].RemoteAddr), rejectedClass(&prepared[i])
			id, err := recordRejected(tx, prepared[i], source, class, db.opts.MaxRejected)
			if err != nil {
				return err
			}
			ids[i] = id
			c.Rejected += int(prepared[i].Count)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("log rejected push: %w", err)
	}
	return ids, nil
}

// RejectedGroup is the key the rejected log aggregates rec under: its
// source (RejectedSource) and kind (the signature verdict and the reason up
// to its first colon).
func RejectedGroup(rec *PushRecord) string {
	return RejectedSource(rec.RemoteAddr) + "\x00" + rejectedClass(rec)
}

// recordRejected runs inside a batch, which may run it more than once: it
// only reads and writes through tx.
func recordRejected(tx RepoTx, rec PushRecord, source, class string, maxGroups int) (uint64, error) {
	entries, err := tx.RejectedEntries()
	if err != nil {
		return 0, err
	}
	entry := &rec
	gid, err := tx.RejectedGroupEntry(source, class)
	if err != nil {
		return 0, err
	}
	if gid != 0 {
		prev, err := tx.Rejected(gid)
		if err != nil {
			return 0, err
		}
		if prev != nil {
			// The first request's evidence stays; the count and the last
			// time move on.
			prev.Count = max(prev.Count, 1) + rec.Count
			if rec.LastSeen.After(lastSeen(prev)) {
				prev.LastSeen, prev.Reason = rec.LastSeen, rec.Reason
			}
			entry = prev
		}
		if err := tx.DeleteRejected(gid); err != nil {
			return 0, err
		}
	} else if entries >= maxGroups {
		// Full: the least recently seen entry is first (entries move to
		// the top when they grow).
		oldest, err := tx.OldestRejected()
		if err != nil {
			return 0, err
		}
		if oldest != nil && rec.LastSeen.Sub(lastSeen(oldest)) > rejectedRetention {
			if err := tx.DeleteRejected(oldest.ID); err != nil {
				return 0, err
			}
			os, oc := RejectedSource(oldest.RemoteAddr), rejectedClass(oldest)
			if g, err := tx.RejectedGroupEntry(os, oc); err != nil {
				return 0, err
			} else if g == oldest.ID {
				if err := tx.DeleteRejectedGroup(os, oc); err != nil {
					return 0, err
				}
			}
		} else if source != OtherSources {
			// Overflow groups are counted by verdict only, so that
			// there are a handful of them whatever the reasons say.
			r := rec
			r.RemoteAddr = OtherSources
			verdict, _, _ := strings.Cut(class, "\x00")
			return recordRejected(tx, r, OtherSources, verdict, maxGroups+1<<20)
		}
	}
	n, err := tx.AppendRejected(entry)
	if err != nil {
		return 0, err
	}
	return n, tx.SetRejectedGroupEntry(source, class, n)
}

func lastSeen(p *PushRecord) time.Time {
	if p.LastSeen.IsZero() {
		return p.ReceivedAt
	}
	return p.LastSeen
}
