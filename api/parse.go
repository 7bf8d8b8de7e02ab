package api

import (
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// ParseOperation reads a decoded request back into its typed operation and
// validates it with the same rules the client applies before sending: this
// is what the sandbox answers 491 with. path, when not empty, is the path
// the request arrived on (a trailing slash is fine). The error is a
// *ValidationError naming every broken rule.
func ParseOperation(req *Request, path string, rules Rules) (Operation, error) {
	svc := req.Service()
	var fe fieldErrors
	op := parseTyped(req, svc, rules, &fe)
	if op == nil {
		return nil, fe.err(svc.Action)
	}
	if path != "" {
		want := PathFor(opAction(op))
		if !strings.EqualFold(strings.TrimSuffix(path, "/"), want) {
			fe.add("", FieldAction, opAction(op)+" must be sent to "+want)
		}
	}
	if err := op.Validate(rules); err != nil {
		if ve, ok := err.(*ValidationError); ok {
			for _, f := range ve.Fields {
				fe.add(f.Group, f.Field, f.Rule)
			}
		}
	}
	return op, fe.err(opAction(op))
}

func opAction(op Operation) string {
	switch o := op.(type) {
	case Reserve:
		return ActionReserve
	case CancelReservation:
		return ActionCancelReservation
	case UpdateReservation:
		return ActionUpdateReservation
	case Capture:
		return ActionPay
	case Refund, GiftCardRefund:
		return ActionRefund
	case GiftCardPay:
		return o.Action()
	}
	return ""
}

func parseTyped(req *Request, svc Service, rules Rules, fe *fieldErrors) Operation {
	ps := svc.Parameters
	amount := func(a *Amount) decimal.Decimal { return a.Dec() }
	switch {
	case strings.EqualFold(svc.Name, ServiceDeferred):
		switch {
		case strings.EqualFold(svc.Action, ActionReserve):
			return parseReserve(req, ps, fe)
		case strings.EqualFold(svc.Action, ActionCancelReservation):
			return CancelReservation{Currency: req.Currency, Invoice: req.Invoice, ReservationNumber: param(ps, PReservationNumber)}
		case strings.EqualFold(svc.Action, ActionUpdateReservation):
			u := UpdateReservation{Currency: req.Currency, Invoice: req.Invoice, ReservationNumber: param(ps, PReservationNumber)}
			u.Articles = parseArticles(ps, fe, true)
			checkB2B(ps, fe)
			u.Billing = parseAddress(ps, "Billing")
			u.Shipping = parseAddress(ps, "Shipping")
			return u
		case strings.EqualFold(svc.Action, ActionPay):
			c := Capture{Currency: req.Currency, Invoice: req.Invoice, ReservationNumber: param(ps, PReservationNumber), Amount: amount(req.AmountDebit)}
			for _, a := range parseArticles(ps, fe, false) {
				c.Lines = append(c.Lines, CaptureLine{ArticleNumber: a.Number, Quantity: a.Quantity})
			}
			return c
		case strings.EqualFold(svc.Action, ActionRefund):
			return Refund{Currency: req.Currency, Invoice: req.Invoice, OriginalTransactionKey: req.OriginalTransactionKey, Amount: amount(req.AmountCredit)}
		}
		fe.add("", FieldAction, "deferredkp has no action "+strconvQuote(svc.Action)+" (Reserve, CancelReservation, UpdateReservation, Pay, Refund)")
		return nil
	case rules.IsGiftCardCode(svc.Name):
		switch {
		case strings.EqualFold(svc.Action, ActionPay), strings.EqualFold(svc.Action, ActionPayRemainder):
			g := GiftCardPay{ServiceCode: svc.Name, Currency: req.Currency, Invoice: req.Invoice, Amount: amount(req.AmountDebit),
				LastName: param(ps, PLastName), Email: param(ps, PEmail), PushURL: req.PushURL}
			g.Card, _ = CardFromParams(ps)
			if strings.EqualFold(svc.Action, ActionPayRemainder) {
				g.GroupTransaction = req.OriginalTransactionKey
				if g.GroupTransaction == "" {
					fe.add("", FieldOriginalKey, "required on PayRemainder: the group transaction of the partial payment")
					return nil
				}
			}
			return g
		case strings.EqualFold(svc.Action, ActionRefund):
			return GiftCardRefund{ServiceCode: svc.Name, Currency: req.Currency, Invoice: req.Invoice,
				OriginalTransactionKey: req.OriginalTransactionKey, Amount: amount(req.AmountCredit),
				LastName: param(ps, PLastName), Email: param(ps, PEmail), PushURL: req.PushURL}
		}
		fe.add("", FieldAction, "gift cards have no action "+strconvQuote(svc.Action)+" (Pay, Refund)")
		return nil
	}
	checkGiftCardCode(fe, rules, svc.Name)
	return nil
}

func param(ps []Parameter, name string) string {
	v, _ := findParam(ps, name)
	return v
}

func parseReserve(req *Request, ps []Parameter, fe *fieldErrors) Reserve {
	r := Reserve{Currency: req.Currency, Invoice: req.Invoice, PushURL: req.PushURL, ReturnURL: req.ReturnURL}
	if req.AmountDebit != nil {
		d := req.AmountDebit.Decimal
		r.AmountDebit = &d
	}
	if req.ClientIP != nil {
		r.ClientIP = *req.ClientIP
	}
	r.Articles = parseArticles(ps, fe, true)
	checkB2B(ps, fe)
	r.Billing = parseAddress(ps, "Billing")
	r.Shipping = parseAddress(ps, "Shipping")
	switch v, ok := findParam(ps, PShippingSameAsBill); {
	case !ok:
		fe.add("", PShippingSameAsBill, "required (true or false)")
	default:
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			fe.add("", PShippingSameAsBill, "must be true or false")
		}
		r.ShippingSameAsBilling = b
	}
	if v := param(ps, PGender); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fe.add("", PGender, "must be 1 (male) or 2 (female)")
		}
		r.Customer.Gender = n
	}
	r.Customer.OperatingCountry = param(ps, POperatingCountry)
	r.Customer.Pno = param(ps, PPno)
	return r
}

func parseAddress(ps []Parameter, prefix string) Address {
	var a Address
	names := addressNames(prefix == "Shipping")
	for i, v := range a.values() {
		*v = param(ps, names[i])
	}
	return a
}

// parseArticles groups the Article parameters by GroupID, in the order of
// their GroupIDs (numerically where they are numbers). whole asks for every
// group to carry ArticlePrice, ArticleQuantity and ArticleVat: a missing
// one is an error, never read as 0 (Reserve, and UpdateReservation whose
// groups replace the reserved lines).
func parseArticles(ps []Parameter, fe *fieldErrors, whole bool) []Article {
	groups := map[string]*Article{}
	seen := map[string]map[string]bool{} // GroupID → folded names present
	var ids []string
	for _, p := range ps {
		isArticle := strings.EqualFold(p.GroupType, GroupTypeArticle) ||
			(p.GroupType == "" && len(p.Name) > 7 && strings.EqualFold(p.Name[:7], "Article"))
		if !isArticle {
			continue
		}
		id := string(p.GroupID)
		if id == "" {
			fe.add("", p.Name, "must sit in an Article group with a GroupID")
			continue
		}
		a, ok := groups[id]
		if !ok {
			a = &Article{}
			groups[id] = a
			seen[id] = map[string]bool{}
			ids = append(ids, id)
		}
		seen[id][strings.ToLower(p.Name)] = true
		v := string(p.Value)
		switch {
		case strings.EqualFold(p.Name, PArticleNumber):
			a.Number = v
		case strings.EqualFold(p.Name, PArticleTitle):
			a.Title = v
		case strings.EqualFold(p.Name, PArticleType):
			a.Type = v
		case strings.EqualFold(p.Name, PArticlePrice):
			d, err := decimal.NewFromString(v)
			if err != nil {
				fe.add(id, PArticlePrice, "must be a decimal number such as 19.99")
			}
			a.Price = d
		case strings.EqualFold(p.Name, PArticleQuantity):
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				fe.add(id, PArticleQuantity, "must be a positive integer")
			}
			a.Quantity = n
		case strings.EqualFold(p.Name, PArticleVat):
			d, err := decimal.NewFromString(v)
			if err != nil {
				fe.add(id, PArticleVat, "must be a decimal number such as 21")
			}
			a.Vat = d
		}
	}
	sort.SliceStable(ids, func(i, j int) bool {
		a, errA := strconv.Atoi(ids[i])
		b, errB := strconv.Atoi(ids[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return ids[i] < ids[j]
	})
	out := make([]Article, 0, len(ids))
	for _, id := range ids {
		if whole {
			for _, name := range []string{PArticlePrice, PArticleQuantity, PArticleVat} {
				if !seen[id][strings.ToLower(name)] {
					fe.add(id, name, "required in every article group (a missing value is not 0)")
				}
			}
		}
		out = append(out, *groups[id])
	}
	return out
}

// Parameters that mark an order as business-to-business, which the
// deferred-invoice service does not take. The document lists
// BillingCompanyName (and ShippingCompany) as optional Reserve parameters,
// so a company name alone is a consumer's delivery detail, not a B2B order;
// what makes one is a business customer category or a company
// registration, as the family's other invoice services send them.
var b2bMarkers = []string{"ChamberOfCommerce", "CompanyCOCRegistration", "CocNumber", "VatNumber", "CompanyVATNumber"}

// b2bCategories are the family's customer-category parameters and the
// values that mean a business customer.
var b2bCategories = map[string][]string{
	"Category":     {"B2B", "Company", "Business"},
	"CustomerType": {"B2B", "Company", "Business"},
	"B2B":          {"true", "1", "yes"},
}

// RuleNoB2B is the rule a business-to-business order breaks.
const RuleNoB2B = "business-to-business orders are not supported by the deferred-invoice service"

// checkB2B refuses a Reserve or UpdateReservation that carries a business
// marker, naming the parameter.
func checkB2B(ps []Parameter, fe *fieldErrors) {
	for _, p := range ps {
		v := strings.TrimSpace(string(p.Value))
		for _, m := range b2bMarkers {
			if equalFold(p.Name, m) && v != "" {
				fe.add("", m, RuleNoB2B+" (a company registration makes it one)")
			}
		}
		for name, values := range b2bCategories {
			if !equalFold(p.Name, name) {
				continue
			}
			for _, bv := range values {
				if strings.EqualFold(v, bv) {
					fe.add("", name, RuleNoB2B+" ("+name+" "+strconvQuote(v)+")")
				}
			}
		}
	}
}
