package sandbox

import "paydesk/api"

// returnURLs are where the customer goes back to after the checkout when
// the outcome is not a success; "" falls back to ReturnURL.
type returnURLs struct {
	Cancel string `json:",omitempty"`
	Error  string `json:",omitempty"`
	Reject string `json:",omitempty"`
}

func returnURLsOf(req *api.Request) returnURLs {
	if req == nil {
		return returnURLs{}
	}
	return returnURLs{Cancel: req.ReturnURLCancel, Error: req.ReturnURLError, Reject: req.ReturnURLReject}
}
