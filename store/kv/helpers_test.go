package kv

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store/domain"
)

// t0 is the time the tests' records are made at.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// put writes records as given through the contract, in one transaction:
// the engine keeps what it is handed (the rules that derive a
// reservation's amounts are the store's, and not what these tests check).
func put(t testing.TB, db *DB, rs []*Reservation, ts []*Transaction) {
	t.Helper()
	err := db.Repo().Update(t.Context(), func(tx RepoTx) error {
		for _, x := range ts {
			if _, err := tx.PutTransaction(x); err != nil {
				return err
			}
		}
		for _, r := range rs {
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listData writes n random reservations for the lists: customers whose
// names fold (Müller, muller, Émile), articles with accents, ties in the
// creation time, every state, some without their lines or their push;
// then writes some of them again changed (state, customer) or unchanged,
// so the lists' indexes move.
func listData(t testing.TB, db *DB, n int) {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	names := []string{"Anna Müller", "Jan de Vries", "Lukas Gruber", "Eva Bakker", "Émile Zola", "anna muller"}
	titles := []string{"Espresso cups", "Hiking boots", "Wool scarf", "Café crème"}
	var rs []*Reservation
	for i := range n {
		first, last, _ := strings.Cut(names[rng.Intn(len(names))], " ")
		created := t0.Add(-time.Duration(rng.Intn(n/2+1)) * time.Minute) // ties on purpose
		r := &Reservation{Key: fmt.Sprintf("%032X", rng.Uint64()), ReservationNumber: fmt.Sprintf("R%07d", i),
			Invoice: fmt.Sprintf("INV-%05d", rng.Intn(n*2)), Currency: "EUR", LinesKnown: i%11 != 0, Created: created,
			Original: Update{Billing: api.Address{FirstName: first, LastName: last, Country: "NL", Email: fmt.Sprintf("c%d@example.com", i)},
				Articles: []api.Article{{Number: fmt.Sprintf("SKU-%d", rng.Intn(20)), Title: titles[rng.Intn(len(titles))],
					Type: api.ArticleTypeGeneral, Price: decimal.New(int64(100*(1+rng.Intn(5))), -2), Quantity: 1, Vat: decimal.NewFromInt(21)}}},
			Status: Status{Code: api.StatusSuccess, Time: created}}
		switch rng.Intn(6) {
		case 0:
			r.Status = Status{Code: api.StatusPendingProcessing, Time: created}
		case 1:
			r.Status = Status{Code: api.StatusRejected, Time: created}
		case 2:
			r.Requests = append(r.Requests, domain.Request{Key: fmt.Sprintf("C%031X", rng.Uint64()), Action: api.ActionCancelReservation,
				Status: Status{Code: api.StatusSuccess, Time: created.Add(time.Hour)}})
		}
		if i%97 == 0 {
			r.Key = domain.PlaceholderPrefix + r.Invoice // an order without its push
		}
		rs = append(rs, r)
	}
	put(t, db, rs, nil)
	var again []*Reservation
	for i, r := range rs {
		switch i % 7 {
		case 0:
			r.Requests = append(r.Requests, domain.Request{Key: fmt.Sprintf("D%031X", i), Action: api.ActionCancelReservation,
				Status: Status{Code: api.StatusSuccess, Time: r.Created.Add(2 * time.Hour)}})
			again = append(again, r)
		case 3:
			r.Original.Billing.LastName = "Østergaard"
			again = append(again, r)
		case 5:
			again = append(again, r)
		}
	}
	put(t, db, again, nil)
}
