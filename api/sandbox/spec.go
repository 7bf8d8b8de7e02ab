package sandbox

import (
	"strings"

	"paydesk/api"
)

// Specification is the answer of GET /json/{Transaction,DataRequest}/
// Specification/{service}: the actions of a service and their parameters,
// in the family's field names. The family's SDKs use it to confirm
// credentials (a 200 means the signature was accepted).
type Specification struct {
	Name                string
	Version             int
	Description         string
	Actions             []SpecAction
	SupportedCurrencies []SpecCurrency
}

// SpecAction is one action of a service.
type SpecAction struct {
	Name               string
	Type               int // 1 for a transaction, 2 for a data request (the sandbox's numbering)
	Default            bool
	Description        string
	RequestParameters  []SpecParameter
	ResponseParameters []SpecParameter
}

// SpecParameter is one parameter of an action. DataType is the sandbox's
// numbering: 0 string, 1 integer, 2 decimal, 3 date (DDMMYYYY), 4 boolean.
type SpecParameter struct {
	Name                 string
	DataType             int
	MaxOccurs            int
	Required             bool
	Group                string `json:",omitempty"`
	Description          string
	IsRequestParameter   bool
	ListItemDescriptions []SpecListItem `json:",omitempty"`
}

// SpecListItem is an allowed value.
type SpecListItem struct {
	Value       string
	Description string
}

// SpecCurrency is a currency the service takes.
type SpecCurrency struct {
	IsoNumber int
	Code      string
	Name      string
}

const (
	dtString = iota
	dtInteger
	dtDecimal
	dtDate
	dtBoolean
)

const (
	specTransaction = 1
	specDataRequest = 2
)

func req(name string, dt int, required bool, group, desc string, items ...SpecListItem) SpecParameter {
	maxOccurs := 1
	if group == "Article" {
		maxOccurs = 99
	}
	return SpecParameter{Name: name, DataType: dt, MaxOccurs: maxOccurs, Required: required, Group: group, Description: desc,
		IsRequestParameter: true, ListItemDescriptions: items}
}

func resp(name, desc string) SpecParameter {
	return SpecParameter{Name: name, MaxOccurs: 1, Description: desc}
}

var countries = []SpecListItem{{"NL", "Netherlands"}, {"DE", "Germany"}, {"AT", "Austria"}}

// articleParams are the article group: required on Reserve, the title
// only on UpdateReservation.
func articleParams(reserve bool) []SpecParameter {
	return []SpecParameter{
		req(api.PArticleTitle, dtString, true, "Article", "Name of the article"),
		req(api.PArticleNumber, dtString, reserve, "Article", "Article identifier, unique in the reservation"),
		req(api.PArticleType, dtString, false, "Article", "Kind of line", SpecListItem{"General", "product or discount"},
			SpecListItem{"ShipmentFee", "shipping"}, SpecListItem{"HandlingFee", "payment method fee"}),
		req(api.PArticlePrice, dtDecimal, reserve, "Article", "Price per article including VAT; negative for a discount"),
		req(api.PArticleQuantity, dtInteger, reserve, "Article", "Number of articles"),
		req(api.PArticleVat, dtDecimal, reserve, "Article", "VAT percentage"),
	}
}

func addressParams(reserve bool) []SpecParameter {
	var ps []SpecParameter
	required := map[string]bool{"BillingFirstName": true, "BillingStreet": true, "BillingHouseNumber": true,
		"BillingCity": true, "BillingCountry": true, "BillingEmail": true}
	for _, n := range []string{"BillingFirstName", "BillingLastName", "BillingCareOf", "BillingStreet", "BillingHouseNumber",
		"BillingHouseNumberSuffix", "BillingPostalCode", "BillingCity", "BillingCountry", "BillingEmail",
		"BillingCellPhoneNumber", "BillingPhoneNumber", "ShippingCareOf", "ShippingCompany", "ShippingStreet",
		"ShippingHouseNumber", "ShippingHouseNumberSuffix", "ShippingPostalCode", "ShippingCity", "ShippingCountry",
		"ShippingEmail", "ShippingFirstName", "ShippingLastName", "ShippingCellPhoneNumber", "ShippingPhoneNumber"} {
		var items []SpecListItem
		if strings.HasSuffix(n, "Country") {
			items = countries
		}
		ps = append(ps, req(n, dtString, reserve && required[n], "", "", items...))
	}
	return ps
}

func deferredSpec(data bool) Specification {
	sp := Specification{Name: api.ServiceDeferred, Version: 1, Description: "Deferred invoice (paydesk sandbox)",
		SupportedCurrencies: []SpecCurrency{{IsoNumber: 978, Code: "EUR", Name: "Euro"}}}
	if data {
		reserve := []SpecParameter{
			req(api.PGender, dtInteger, true, "", "1 male, 2 female", SpecListItem{"1", "male"}, SpecListItem{"2", "female"}),
			req(api.POperatingCountry, dtString, true, "", "Must equal BillingCountry", countries...),
			req(api.PPno, dtDate, true, "", "Birth date DDMMYYYY"),
			req(api.PShippingSameAsBill, dtBoolean, true, "", "Whether the shipping address is the billing address"),
		}
		reserve = append(reserve, addressParams(true)...)
		reserve = append(reserve, articleParams(true)...)
		update := append([]SpecParameter{req(api.PReservationNumber, dtString, true, "", "The reservation to change")}, addressParams(false)...)
		update = append(update, articleParams(false)...)
		sp.Actions = []SpecAction{
			{Name: api.ActionReserve, Type: specDataRequest, Default: true, Description: "Reserve the articles after the risk check",
				RequestParameters: reserve, ResponseParameters: []SpecParameter{resp(api.PReservationNumber, "In the Reserve push")}},
			{Name: api.ActionCancelReservation, Type: specDataRequest, Description: "Cancel what is not captured",
				RequestParameters: []SpecParameter{req(api.PReservationNumber, dtString, true, "", "The reservation to cancel")}},
			{Name: api.ActionUpdateReservation, Type: specDataRequest, Description: "Change articles or addresses; the amount may not go up",
				RequestParameters: update},
		}
		return sp
	}
	sp.Actions = []SpecAction{
		{Name: api.ActionPay, Type: specTransaction, Default: true, Description: "Capture a shipment",
			RequestParameters: []SpecParameter{
				req(api.PReservationNumber, dtString, true, "", "The reservation"),
				req(api.PArticleNumber, dtString, false, "Article", "Partial capture: the article"),
				req(api.PArticleQuantity, dtInteger, false, "Article", "Partial capture: how many"),
			},
			ResponseParameters: []SpecParameter{resp(api.PInvoiceNumber, "The provider's invoice of the shipment")}},
		{Name: api.ActionRefund, Type: specTransaction, Description: "Refund (part of) a capture; OriginalTransactionKey names it"},
	}
	return sp
}

func giftCardSpec(name string) Specification {
	var card []SpecParameter
	if api.IsCustomCardCode(name) {
		card = []SpecParameter{req(api.PCardNumber, dtString, true, "", "Card number"), req(api.PPin, dtString, true, "", "PIN")}
	} else {
		card = []SpecParameter{
			req(api.PVoucherACardNumber, dtString, false, "", "Card of voucher provider A"),
			req(api.PVoucherBCardnumber, dtString, false, "", "Card of voucher provider B"),
			req(api.PVoucherBPIN, dtString, false, "", "PIN of a provider A or B card"),
			req(api.PVoucherCCardnumber, dtString, false, "", "Card of voucher provider C"),
			req(api.PVoucherCValidationCode, dtString, false, "", "PIN of a provider C card"),
		}
	}
	contact := []SpecParameter{
		req(api.PLastName, dtString, false, "", "Partial refunds (provider B)"),
		req(api.PEmail, dtString, false, "", "Partial refunds (provider B)"),
	}
	return Specification{Name: name, Version: 1, Description: "Gift card (paydesk sandbox)",
		SupportedCurrencies: []SpecCurrency{{IsoNumber: 978, Code: "EUR", Name: "Euro"}},
		Actions: []SpecAction{
			{Name: api.ActionPay, Type: specTransaction, Default: true, Description: "Pay with the card",
				RequestParameters: append(append([]SpecParameter(nil), card...), contact...)},
			{Name: api.ActionPayRemainder, Type: specTransaction, Description: "Pay the rest of a partial payment; OriginalTransactionKey is the group transaction",
				RequestParameters: card},
			{Name: api.ActionRefund, Type: specTransaction, Description: "Refund a card payment", RequestParameters: contact},
		}}
}

// specification describes a service. A service the sandbox does not offer
// still gets a 200 with no actions: the family's SDKs confirm credentials by
// asking for a service of their own choosing (the Node SDK asks for
// "ideal"), and a signed request is all that check is about.
func (s *Sandbox) specification(name string, data bool) Specification {
	switch {
	case strings.EqualFold(name, api.ServiceDeferred):
		return deferredSpec(data)
	case !data && s.rules.IsGiftCardCode(name):
		return giftCardSpec(strings.ToLower(name))
	}
	return Specification{Name: name, Description: "not offered by the paydesk sandbox", Actions: []SpecAction{}}
}
