package keys

import "charm.land/bubbles/v2/key"

// KeyMap holds every binding of the console. A key means the same thing on
// every screen; a screen only says which of them apply to it.
type KeyMap struct {
	// Global
	Quit    key.Binding
	Help    key.Binding
	Palette key.Binding
	NextTab key.Binding
	PrevTab key.Binding
	Tab1    key.Binding
	Tab2    key.Binding
	Tab3    key.Binding
	Tab4    key.Binding
	Tab5    key.Binding
	// Tab0 is the attention tab (shown first when it has anything).
	Tab0 key.Binding
	// Tabs stands for Tab1…Tab5 in the help.
	Tabs    key.Binding
	Back    key.Binding
	Refresh key.Binding

	// Moving around a list or a detail page
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Home     key.Binding
	End      key.Binding
	Open     key.Binding
	Filter   key.Binding
	Sort     key.Binding
	Reverse  key.Binding
	// Wheel is the mouse wheel, for the help only (it scrolls lists and
	// pages); DetailDown/DetailUp scroll the detail under a log's list.
	Wheel      key.Binding
	DetailDown key.Binding
	DetailUp   key.Binding
	// FilterState cycles the reservation state shown (v, like the push
	// log's status filter).
	FilterState key.Binding

	// Lists
	ExportCSV  key.Binding
	ExportJSON key.Binding

	// Operations (hooks for the forms; off in read-only mode)
	NewReservation key.Binding
	Capture        key.Binding
	Cancel         key.Binding
	Update         key.Binding
	Refund         key.Binding
	GiftCardPay    key.Binding
	Resolve        key.Binding
	Batch          key.Binding // the batch page: capture from a shipment manifest

	// Push log
	CopyKey     key.Binding
	CopyJSON    key.Binding
	SaveFixture key.Binding
	// Money opens the Money page from every tab.
	Money     key.Binding
	Approvals key.Binding
	// Deliveries opens the outbox's page from every tab.
	Deliveries   key.Binding
	Resend       key.Binding
	FilterType   key.Binding
	FilterStatus key.Binding
	// Marks on the reservation list, and the bulk menu over them.
	Mark      key.Binding
	MarkRange key.Binding
	MarkAll   key.Binding
	Bulk      key.Binding
}

// Default is the console's keymap.
func Default() *KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return &KeyMap{
		Quit:    b("q", "quit", "q", "ctrl+c"),
		Help:    b("?", "help", "?"),
		Palette: b(":", "commands", ":", "ctrl+p"),
		NextTab: b("tab", "next tab", "tab"),
		PrevTab: b("shift+tab", "previous tab", "shift+tab"),
		Tab1:    b("1", "reservations", "1"),
		Tab2:    b("2", "transactions", "2"),
		Tab3:    b("3", "pushes", "3"),
		Tab4:    b("4", "audit log", "4"),
		Tab5:    b("5", "gateway log", "5"),
		Tab0:    b("0", "attention", "0"),
		Tabs:    b("1…5", "go to a tab", "1", "2", "3", "4", "5"),
		Back:    b("esc", "back", "esc"),
		Refresh: b("ctrl+r", "reload", "ctrl+r"),

		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		PageUp:   b("pgup", "page up", "pgup", "ctrl+u"),
		PageDown: b("pgdn", "page down", "pgdown", "ctrl+d"),
		Home:     b("home/g", "first", "home", "g"),
		End:      b("end/G", "last", "end", "G"),
		Open:     b("enter", "open", "enter"),
		Filter:   b("/", "filter", "/"),
		Sort:     b("s", "sort by next column", "s"),
		Reverse:  b("S", "reverse sort", "S"),

		Wheel:       b("wheel", "scroll", "wheel"),
		DetailDown:  b("J", "scroll the detail down", "J"),
		DetailUp:    b("K", "scroll the detail up", "K"),
		FilterState: b("v", "filter state", "v"),

		ExportCSV:  b("e", "export CSV", "e"),
		ExportJSON: b("E", "export JSON", "E"),

		NewReservation: b("n", "new test reservation", "n"),
		Capture:        b("c", "capture", "c"),
		Cancel:         b("x", "cancel reservation", "x"),
		Update:         b("u", "update reservation", "u"),
		Refund:         b("f", "refund", "f"),
		GiftCardPay:    b("p", "gift card payment", "p"),
		Resolve:        b("o", "resolve unknown outcome", "o"),
		Batch:          b("B", "batch capture from a manifest", "B"),
		Money:          b("M", "money: the days' totals", "M"),
		Approvals:      b("A", "approvals: refunds waiting", "A"),
		Deliveries:     b("D", "deliveries to the shop", "D"),

		CopyKey:      b("y", "copy key", "y"),
		CopyJSON:     b("Y", "copy JSON", "Y"),
		SaveFixture:  b("w", "save as fixture", "w"),
		Resend:       b("R", "resend (sandbox)", "R"),
		FilterType:   b("t", "filter type", "t"),
		FilterStatus: b("v", "filter status", "v"),

		Mark:      b("space", "mark / unmark", "space"),
		MarkRange: b("V", "mark from the last mark to here", "V"),
		MarkAll:   b("*", "mark all filtered (esc clears)", "*"),
		Bulk:      b("b", "bulk actions on the marked", "b"),
	}
}

// Global are the bindings that work everywhere.
func (k *KeyMap) Global() []key.Binding {
	return []key.Binding{k.NextTab, k.PrevTab, k.Tab0, k.Tab1, k.Tab2, k.Tab3, k.Tab4, k.Tab5, k.Back, k.Refresh, k.Palette, k.Help, k.Quit}
}

// Navigation are the bindings that move through a list.
func (k *KeyMap) Navigation() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End, k.Open, k.Filter, k.Sort, k.Reverse}
}
