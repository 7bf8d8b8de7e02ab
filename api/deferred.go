package api

import (
	"strconv"

	"github.com/shopspring/decimal"
)

// Parameter names of the deferred-invoice service.
const (
	PArticleTitle        = "ArticleTitle"
	PArticleNumber       = "ArticleNumber"
	PArticleType         = "ArticleType"
	PArticlePrice        = "ArticlePrice"
	PArticleQuantity     = "ArticleQuantity"
	PArticleVat          = "ArticleVat"
	PReservationNumber   = "ReservationNumber"
	PInvoiceNumber       = "InvoiceNumber"
	PGender              = "Gender"
	POperatingCountry    = "OperatingCountry"
	PPno                 = "Pno"
	PShippingSameAsBill  = "ShippingSameAsBilling"
	GroupTypeArticle     = "Article"
	ArticleTypeGeneral   = "General"
	ArticleTypeShipment  = "ShipmentFee"
	ArticleTypeHandling  = "HandlingFee"
	FieldCurrency        = "Currency"
	FieldInvoice         = "Invoice"
	FieldAmountDebit     = "AmountDebit"
	FieldAmountCredit    = "AmountCredit"
	FieldOriginalKey     = "OriginalTransactionKey"
	FieldClientIP        = "ClientIP"
	FieldClientIPAddress = "ClientIP.Address"
	FieldClientIPType    = "ClientIP.Type"
)

// Article is one order line. Price is per article, VAT included; a discount
// is an article with a negative price.
type Article struct {
	Number   string
	Title    string
	Type     string // General, ShipmentFee, HandlingFee or "" (not sent)
	Price    decimal.Decimal
	Quantity int
	Vat      decimal.Decimal
}

// Total is Price × Quantity.
func (a Article) Total() decimal.Decimal { return a.Price.Mul(decimal.NewFromInt(int64(a.Quantity))) }

// ArticlesTotal sums the lines.
func ArticlesTotal(as []Article) decimal.Decimal {
	t := decimal.Zero
	for _, a := range as {
		t = t.Add(a.Total())
	}
	return t
}

// Address holds the billing or shipping address fields; Company is
// BillingCompanyName on billing and ShippingCompany on shipping.
type Address struct {
	FirstName         string
	LastName          string
	CareOf            string
	Company           string
	Street            string
	HouseNumber       string
	HouseNumberSuffix string
	PostalCode        string
	City              string
	Country           string
	Email             string
	CellPhoneNumber   string
	PhoneNumber       string
}

// IsZero reports whether no field is set.
func (a Address) IsZero() bool { return a == Address{} }

// addressNames are the parameter names of an address in the order the
// document gives them; the company field is named differently per prefix.
func addressNames(shipping bool) [13]string {
	if shipping {
		return [13]string{"ShippingFirstName", "ShippingLastName", "ShippingCareOf", "ShippingCompany",
			"ShippingStreet", "ShippingHouseNumber", "ShippingHouseNumberSuffix", "ShippingPostalCode",
			"ShippingCity", "ShippingCountry", "ShippingEmail", "ShippingCellPhoneNumber", "ShippingPhoneNumber"}
	}
	return [13]string{"BillingFirstName", "BillingLastName", "BillingCareOf", "BillingCompanyName",
		"BillingStreet", "BillingHouseNumber", "BillingHouseNumberSuffix", "BillingPostalCode",
		"BillingCity", "BillingCountry", "BillingEmail", "BillingCellPhoneNumber", "BillingPhoneNumber"}
}

// values lists the fields in the order of addressNames.
func (a *Address) values() [13]*string {
	return [13]*string{&a.FirstName, &a.LastName, &a.CareOf, &a.Company, &a.Street, &a.HouseNumber,
		&a.HouseNumberSuffix, &a.PostalCode, &a.City, &a.Country, &a.Email, &a.CellPhoneNumber, &a.PhoneNumber}
}

func (a *Address) params(shipping bool, ps []Parameter) []Parameter {
	names := addressNames(shipping)
	for i, v := range a.values() {
		if *v != "" {
			ps = append(ps, Parameter{Name: names[i], Value: FlexString(*v)})
		}
	}
	return ps
}

// Customer holds the customer parameters of a Reserve.
type Customer struct {
	Gender           int    // 1 male, 2 female
	OperatingCountry string // NL, DE or AT; equals BillingCountry
	Pno              string // birth date DDMMYYYY
}

// Reserve asks for a reservation after checkout (DataRequest).
type Reserve struct {
	Currency              string
	Invoice               string
	AmountDebit           *decimal.Decimal // optional; when given, the articles' total
	ClientIP              ClientIP
	Articles              []Article
	Billing               Address
	ShippingSameAsBilling bool
	Shipping              Address // zero when no shipping address is given
	Customer              Customer
	PushURL               string // optional: where the gateway pushes for this one
	ReturnURL             string
}

func articleParams(as []Article, ps []Parameter, full bool) []Parameter {
	for i, a := range as {
		g := FlexString(strconv.Itoa(i + 1))
		add := func(name, v string) {
			ps = append(ps, Parameter{Name: name, Value: FlexString(v), GroupType: GroupTypeArticle, GroupID: g})
		}
		if a.Number != "" {
			add(PArticleNumber, a.Number)
		}
		add(PArticleTitle, a.Title)
		if a.Type != "" {
			add(PArticleType, a.Type)
		}
		if full {
			add(PArticlePrice, WireString(a.Price))
		}
		add(PArticleQuantity, strconv.Itoa(a.Quantity))
		if full {
			add(PArticleVat, WireString(a.Vat))
		}
	}
	return ps
}

func service(name, action string, ps []Parameter) Services {
	return Services{ServiceList: []Service{{Name: name, Action: action, Parameters: ps}}}
}

// Request builds the envelope.
func (r Reserve) Request() *Request {
	ps := make([]Parameter, 0, 8+13*2+6*len(r.Articles))
	if r.Customer.Gender != 0 {
		ps = append(ps, Parameter{Name: PGender, Value: FlexString(strconv.Itoa(r.Customer.Gender))})
	}
	if r.Customer.OperatingCountry != "" {
		ps = append(ps, Parameter{Name: POperatingCountry, Value: FlexString(r.Customer.OperatingCountry)})
	}
	if r.Customer.Pno != "" {
		ps = append(ps, Parameter{Name: PPno, Value: FlexString(r.Customer.Pno)})
	}
	ps = r.Billing.params(false, ps)
	ps = append(ps, Parameter{Name: PShippingSameAsBill, Value: FlexString(strconv.FormatBool(r.ShippingSameAsBilling))})
	ps = r.Shipping.params(true, ps)
	ps = articleParams(r.Articles, ps, true)
	req := &Request{
		Currency: r.Currency, Invoice: r.Invoice, PushURL: r.PushURL, ReturnURL: r.ReturnURL,
		ClientIP: &ClientIP{Type: r.ClientIP.Type, Address: r.ClientIP.Address},
		Services: service(ServiceDeferred, ActionReserve, ps),
	}
	if r.AmountDebit != nil {
		req.AmountDebit = NewAmount(*r.AmountDebit)
	}
	return req
}

// CancelReservation cancels a reservation, or what is left of it after
// partial shipments (DataRequest).
type CancelReservation struct {
	Currency          string
	Invoice           string
	ReservationNumber string
}

// Request builds the envelope.
func (c CancelReservation) Request() *Request {
	return &Request{Currency: c.Currency, Invoice: c.Invoice,
		Services: service(ServiceDeferred, ActionCancelReservation, []Parameter{{Name: PReservationNumber, Value: FlexString(c.ReservationNumber)}})}
}

// UpdateReservation changes articles and addresses of a reservation; the
// amount may stay or go down, never up (DataRequest).
type UpdateReservation struct {
	Currency          string
	Invoice           string
	ReservationNumber string
	Articles          []Article // when given, the new lines; ArticleTitle is required
	Billing           Address
	Shipping          Address
	// ReservedAmount, when the caller knows it, lets validation refuse an
	// update that would raise the amount before anything is sent. Not sent.
	ReservedAmount *decimal.Decimal
}

// Request builds the envelope.
func (u UpdateReservation) Request() *Request {
	ps := []Parameter{{Name: PReservationNumber, Value: FlexString(u.ReservationNumber)}}
	ps = u.Billing.params(false, ps)
	ps = u.Shipping.params(true, ps)
	ps = articleParams(u.Articles, ps, true)
	return &Request{Currency: u.Currency, Invoice: u.Invoice, Services: service(ServiceDeferred, ActionUpdateReservation, ps)}
}

// CaptureLine is one article of a partial capture.
type CaptureLine struct {
	ArticleNumber string
	Quantity      int
}

// Capture activates a reservation for a shipment (deferred Pay,
// Transaction). No lines means a full capture.
type Capture struct {
	Currency          string
	Invoice           string
	ReservationNumber string
	Amount            decimal.Decimal
	Lines             []CaptureLine
}

// Request builds the envelope.
func (c Capture) Request() *Request {
	ps := make([]Parameter, 0, 1+2*len(c.Lines))
	ps = append(ps, Parameter{Name: PReservationNumber, Value: FlexString(c.ReservationNumber)})
	for i, l := range c.Lines {
		g := FlexString(strconv.Itoa(i + 1))
		ps = append(ps,
			Parameter{Name: PArticleNumber, Value: FlexString(l.ArticleNumber), GroupType: GroupTypeArticle, GroupID: g},
			Parameter{Name: PArticleQuantity, Value: FlexString(strconv.Itoa(l.Quantity)), GroupType: GroupTypeArticle, GroupID: g})
	}
	return &Request{Currency: c.Currency, Invoice: c.Invoice, AmountDebit: NewAmount(c.Amount),
		Services: service(ServiceDeferred, ActionPay, ps)}
}

// Refund refunds (part of) a deferred-invoice capture (Transaction). The
// service item carries no parameters.
type Refund struct {
	Currency               string
	Invoice                string
	OriginalTransactionKey string
	Amount                 decimal.Decimal
}

// Request builds the envelope.
func (r Refund) Request() *Request {
	return &Request{Currency: r.Currency, Invoice: r.Invoice, AmountCredit: NewAmount(r.Amount),
		OriginalTransactionKey: r.OriginalTransactionKey, Services: service(ServiceDeferred, ActionRefund, []Parameter{})}
}
