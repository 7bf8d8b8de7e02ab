package repotest

import (
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store/domain"
)

// ListData is n random reservations for the lists, with what the store's
// rules derive (customer, lines, cancelled) set as they would: customers whose
// names fold (Müller, muller, Émile), articles with accents, ties in the
// creation time, every state, some without their lines or their push;
// then (again) some of them changed (state, customer) or unchanged, to be
// written after the first: the lists' indexes move. The same n gives the
// same records.
func ListData(n int) (rs, again []*domain.Reservation) {
	rng := rand.New(rand.NewSource(7))
	names := []string{"Anna Müller", "Jan de Vries", "Lukas Gruber", "Eva Bakker", "Émile Zola", "anna muller"}
	titles := []string{"Espresso cups", "Hiking boots", "Wool scarf", "Café crème"}
	for i := range n {
		first, last, _ := strings.Cut(names[rng.Intn(len(names))], " ")
		created := t0.Add(-time.Duration(rng.Intn(n/2+1)) * time.Minute) // ties on purpose
		r := &domain.Reservation{Key: fmt.Sprintf("%032X", rng.Uint64()), ReservationNumber: fmt.Sprintf("R%07d", i),
			Invoice: fmt.Sprintf("INV-%05d", rng.Intn(n*2)), Currency: "EUR", LinesKnown: i%11 != 0, Created: created,
			Original: domain.Update{Billing: api.Address{FirstName: first, LastName: last, Country: "NL", Email: fmt.Sprintf("c%d@example.com", i)},
				Articles: []api.Article{{Number: fmt.Sprintf("SKU-%d", rng.Intn(20)), Title: titles[rng.Intn(len(titles))],
					Type: api.ArticleTypeGeneral, Price: decimal.New(int64(100*(1+rng.Intn(5))), -2), Quantity: 1, Vat: decimal.NewFromInt(21)}}},
			Status: domain.Status{Code: api.StatusSuccess, Time: created}}
		// What the store's rules derive from the request (the customer,
		// the lines): written as they would be.
		a := r.Original.Articles[0]
		r.CustomerName, r.CustomerEmail, r.Country = first+" "+last, r.Original.Billing.Email, "NL"
		r.Lines = []domain.Line{{ArticleNumber: a.Number, Title: a.Title, Type: a.Type, Price: a.Price, Vat: a.Vat, Reserved: a.Quantity}}
		switch rng.Intn(6) {
		case 0:
			r.Status = domain.Status{Code: api.StatusPendingProcessing, Time: created}
		case 1:
			r.Status = domain.Status{Code: api.StatusRejected, Time: created}
		case 2:
			r.Requests = append(r.Requests, domain.Request{Key: fmt.Sprintf("C%031X", rng.Uint64()), Action: api.ActionCancelReservation,
				Status: domain.Status{Code: api.StatusSuccess, Time: created.Add(time.Hour)}})
			r.Cancelled = true
		}
		if i%97 == 0 {
			r.Key = domain.PlaceholderPrefix + r.Invoice // an order without its push
		}
		rs = append(rs, r)
	}
	for i, r := range rs {
		switch i % 7 {
		case 0:
			r.Requests = append(r.Requests, domain.Request{Key: fmt.Sprintf("D%031X", i), Action: api.ActionCancelReservation,
				Status: domain.Status{Code: api.StatusSuccess, Time: r.Created.Add(2 * time.Hour)}})
			r.Cancelled = true
			again = append(again, r)
		case 3:
			r.Original.Billing.LastName = "Østergaard"
			first, _, _ := strings.Cut(r.CustomerName, " ")
			r.CustomerName = first + " Østergaard"
			again = append(again, r)
		case 5:
			again = append(again, r)
		}
	}
	return rs, again
}
