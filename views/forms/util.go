package forms

import (
	"errors"

	"paydesk/api"
)

func asValidation(err error) (*api.ValidationError, bool) {
	var ve *api.ValidationError
	if errors.As(err, &ve) {
		return ve, true
	}
	return nil, false
}
