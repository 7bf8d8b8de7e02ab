package ui

// The tab bar and the status line are a few dozen styled pieces, drawn
// with every frame: after the table, the dearest part of a frame whose
// only news is a row (fifty consoles over SSH each draw one per reload).
// Their inputs are a handful of numbers; each is kept with them and drawn
// again only when one changed.

// tabBarKey is what the tab bar shows beside the console's fixed settings
// (mode, read-only, the tabs' titles).
type tabBarKey struct {
	width, active int
	attention     string // CountText: the count, "+" when capped
	dark          bool
}

// statusKey is what the status line shows beside the gateway and the
// listener.
type statusKey struct {
	width                  int
	dark                   bool
	pushes, rejected       uint64
	unknown, session, late int
	attention              string // CountText
}

type chromeMemo struct {
	tabKey    tabBarKey
	tab       string
	statusKey statusKey
	status    string
	// drawn counts the bars drawn afresh (the tests count them).
	drawn int
}

func (a *App) tabBar() string {
	k := tabBarKey{width: a.width, active: a.active, attention: a.attention().CountText(), dark: a.vctx.Theme.IsDark}
	if a.chrome.tab == "" || k != a.chrome.tabKey {
		a.chrome.tabKey, a.chrome.tab = k, a.drawTabBar()
		a.chrome.drawn++
	}
	return a.chrome.tab
}

func (a *App) statusBar() string {
	k := statusKey{width: a.width, dark: a.vctx.Theme.IsDark, pushes: a.counts.Pushes, rejected: a.counts.Rejected,
		unknown: a.counts.OutcomeUnknown, session: a.sessionPushes, late: a.pushWatch.late(a.cfg.Now()), attention: a.attention().CountText()}
	if a.chrome.status == "" || k != a.chrome.statusKey {
		a.chrome.statusKey, a.chrome.status = k, a.drawStatusBar()
		a.chrome.drawn++
	}
	return a.chrome.status
}
