package ui

import (
	"reflect"
	"testing"

	"paydesk/store"
)

// TestMergeKeepsEveryField: a change bundled with others keeps what it
// says, whichever comes first — orders and approvals as well as pushes,
// reservations, receipts — so the console reloads the tabs each touched.
// Every exported field of store.Change is a case of its own.
func TestMergeKeepsEveryField(t *testing.T) {
	type tc struct {
		name string
		only store.Change // that field set, nothing else
		get  func(store.Change) reflect.Value
	}
	var cases []tc
	ct := reflect.TypeOf(store.Change{})
	for i := range ct.NumField() {
		f := ct.Field(i)
		if !f.IsExported() {
			continue
		}
		var c store.Change
		v := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Type.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int:
			v.SetInt(1)
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{"K"}))
		default:
			t.Fatalf("store.Change.%s is a %s: teach merge and this test how to bundle it", f.Name, f.Type)
		}
		if f.Name == "ReceiptKeys" {
			c.Receipts = 1 // keys name receipts; alone they mean nothing
		}
		cases = append(cases, tc{f.Name, c, func(c store.Change) reflect.Value { return reflect.ValueOf(c).Field(i) }})
	}
	for _, c := range cases {
		for _, order := range []struct {
			name string
			a, b store.Change
		}{
			{"first", c.only, store.Change{Audit: c.name != "Audit"}},
			{"second", store.Change{Audit: c.name != "Audit"}, c.only},
			{"alone", store.Change{}, c.only},
		} {
			t.Run(c.name+"/"+order.name, func(t *testing.T) {
				got := merge(order.a, order.b)
				if want := c.get(c.only); !reflect.DeepEqual(c.get(got).Interface(), want.Interface()) {
					t.Errorf("merged %s = %v, want %v (merged %+v)", c.name, c.get(got), want, got)
				}
				if c.name != "Audit" && order.name != "alone" && !got.Audit {
					t.Errorf("the other change's Audit was dropped: %+v", got)
				}
			})
		}
	}
}
