package sandbox

import "paydesk/api"

// echoFields are the merchant's own fields of a request that the gateway
// gives back in its response, pushes and lookups: Order,
// AdditionalParameters and CustomParameters. Shops match pushes on them.
type echoFields struct {
	Order      string          `json:",omitempty"`
	Additional []api.NameValue `json:",omitempty"`
	Custom     []api.NameValue `json:",omitempty"`
}

func echoOf(req *api.Request) echoFields {
	if req == nil {
		return echoFields{}
	}
	return echoFields{Order: req.Order, Additional: req.AdditionalParameters.Items(), Custom: req.CustomParameters.Items()}
}

// The family writes the lists in two shapes: pushes (the SDKs' push
// samples) use "List"; responses use "AdditionalParameter" for the
// additional parameters (the .NET SDK's response types) and "List" for the
// custom ones. A list that was not sent stays null.

func (e echoFields) order() *string {
	if e.Order == "" {
		return nil
	}
	return api.Ptr(e.Order)
}

func listOf(items []api.NameValue, responseShape bool) *api.NameValueList {
	if len(items) == 0 {
		return nil
	}
	items = append([]api.NameValue(nil), items...)
	if responseShape {
		return &api.NameValueList{AdditionalParameter: items}
	}
	return &api.NameValueList{List: items}
}

// echo puts a transaction's echoed fields into a response.
func (s *Sandbox) echo(t *txRecord, resp *api.Response) {
	resp.Order = t.Echo.order()
	resp.AdditionalParameters = listOf(t.Echo.Additional, true)
	resp.CustomParameters = listOf(t.Echo.Custom, false)
}

// addTx records a new transaction with its creation order and the fields
// it echoes.
func (s *Sandbox) addTx(t *txRecord, e echoFields) {
	t.Seq = s.ids.N
	t.Echo = e
	s.txs[t.Key] = t
	s.byInvoice[t.Invoice] = append(s.byInvoice[t.Invoice], t)
}
