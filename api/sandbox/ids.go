package sandbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// idSource hands out transaction keys, payment keys, reservation numbers
// and invoice numbers. Every value is derived from (seed, counter), so a
// fixed seed gives the same sequence in every run, and the counters are
// persisted with the state so a restart never repeats a key.
type idSource struct {
	Seed    [32]byte
	N       uint64 // values derived so far
	Invoice uint64 // invoice numbers handed out so far
}

func newIDSource(seed uint64) idSource {
	var g idSource
	if seed == 0 {
		_, _ = rand.Read(g.Seed[:]) // crypto/rand.Read never fails on supported platforms
		return g
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	g.Seed = sha256.Sum256(append([]byte("paydesk sandbox seed "), b[:]...))
	return g
}

func (g *idSource) next() [32]byte {
	g.N++
	var buf [40]byte
	copy(buf[:32], g.Seed[:])
	binary.BigEndian.PutUint64(buf[32:], g.N)
	return sha256.Sum256(buf[:])
}

// key is 32 upper-case hex characters, the shape of the gateway's keys.
func (g *idSource) key() string {
	h := g.next()
	return strings.ToUpper(hex.EncodeToString(h[:16]))
}

// reservationNumber is shaped like the provider's: a version 4 UUID in
// lower case ("6c24888a-24ba-42bf-be19-7ceec6f0ee23").
func (g *idSource) reservationNumber() string {
	h := g.next()
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:16])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// invoiceNumber is the provider's invoice number for a shipment: eight
// digits, counting up from a seed-dependent start, so it is unique.
func (g *idSource) invoiceNumber() string {
	g.Invoice++
	start := binary.BigEndian.Uint64(g.Seed[:8]) % 80_000_000
	return strconv.FormatUint(10_000_000+(start+g.Invoice)%90_000_000, 10)
}

func (g idSource) String() string { return fmt.Sprintf("ids{n=%d invoice=%d}", g.N, g.Invoice) }

// keyLocked is key for callers that do not hold mu.
func (g *idSource) keyLocked(mu *sync.Mutex) string {
	mu.Lock()
	defer mu.Unlock()
	return g.key()
}
