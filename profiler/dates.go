package profiler

import (
	"strings"
	"time"
)

// dateLayout is one date or timestamp layout the profiler recognises.
// Month and day fields are written unpadded (1/2/2006) because Go's
// parser then accepts both 02/08 and 2/8.
type dateLayout struct {
	layout  string
	display string
	hasTime bool
	// twin is the index of the same layout with day and month swapped, or -1.
	twin int8
	// alias is the index of the same layout with the month's name spelled
	// the other way (Jan, January), or -1: May is both.
	alias int8
}

// dateLayouts are tried by family (see dateFamily). A column's layout is
// decided once, from all its values, in colAcc.finish: the layout that
// parses the most values wins (ties go to the earlier entry), and the
// values it does not parse are counted.
var dateLayouts = []dateLayout{
	// 0: ISO family (four-digit year, then '-')
	{"2006-01-02", "YYYY-MM-DD", false, -1, -1},
	{time.RFC3339, "RFC 3339", true, -1, -1},
	{"2006-01-02T15:04:05", "YYYY-MM-DDTHH:mm:ss", true, -1, -1},
	{"2006-01-02 15:04:05", "YYYY-MM-DD HH:mm:ss", true, -1, -1},
	{"2006-01-02 15:04:05Z07:00", "YYYY-MM-DD HH:mm:ssZ", true, -1, -1},
	{"2006-01-02 15:04", "YYYY-MM-DD HH:mm", true, -1, -1},
	// 6: four-digit year, then '/'
	{"2006/01/02", "YYYY/MM/DD", false, -1, -1},
	{"2006/01/02 15:04:05", "YYYY/MM/DD HH:mm:ss", true, -1, -1},
	// 8: day or month first, '/': month first wins a tie
	{"1/2/2006", "MM/DD/YYYY", false, 9, -1},
	{"2/1/2006", "DD/MM/YYYY", false, 8, -1},
	{"1/2/2006 15:04:05", "MM/DD/YYYY HH:mm:ss", true, 11, -1},
	{"2/1/2006 15:04:05", "DD/MM/YYYY HH:mm:ss", true, 10, -1},
	{"1/2/2006 15:04", "MM/DD/YYYY HH:mm", true, 13, -1},
	{"2/1/2006 15:04", "DD/MM/YYYY HH:mm", true, 12, -1},
	{"1/2/2006 3:04:05 PM", "MM/DD/YYYY hh:mm:ss AM", true, 15, -1},
	{"2/1/2006 3:04:05 PM", "DD/MM/YYYY hh:mm:ss AM", true, 14, -1},
	{"1/2/2006 3:04 PM", "MM/DD/YYYY hh:mm AM", true, 17, -1},
	{"2/1/2006 3:04 PM", "DD/MM/YYYY hh:mm AM", true, 16, -1},
	// 18: day or month first, '-': day first wins a tie
	{"2-1-2006", "DD-MM-YYYY", false, 19, -1},
	{"1-2-2006", "MM-DD-YYYY", false, 18, -1},
	{"2-1-2006 15:04:05", "DD-MM-YYYY HH:mm:ss", true, 21, -1},
	{"1-2-2006 15:04:05", "MM-DD-YYYY HH:mm:ss", true, 20, -1},
	{"2-Jan-2006", "DD-Mon-YYYY", false, -1, -1},
	// 23: '.'
	{"2.1.2006", "DD.MM.YYYY", false, -1, -1},
	{"2.1.2006 15:04:05", "DD.MM.YYYY HH:mm:ss", true, -1, -1},
	{"2.1.2006 15:04", "DD.MM.YYYY HH:mm", true, -1, -1},
	// 26: time of day
	{"15:04:05", "HH:mm:ss", true, -1, -1},
	{"15:04", "HH:mm", true, -1, -1},
	// 28: month names, month first
	{"Jan 2, 2006", "Mon D, YYYY", false, -1, 29},
	{"January 2, 2006", "Month D, YYYY", false, -1, 28},
	{"Jan 2 2006", "Mon D YYYY", false, -1, -1},
	// 31: month names, day first
	{"2 Jan 2006", "D Mon YYYY", false, -1, 32},
	{"2 January 2006", "D Month YYYY", false, -1, 31},
}

// widerLayouts maps a layout without seconds to the one writing the same
// values with them (HH:mm to HH:mm:ss), of the layouts without a twin or
// alias. A value of the first counts for the second too, at the same
// instant, so that a column mixing the two is read as the wider one, and
// a column of the first alone as the first (dateLayoutChoice).
var widerLayouts = func() map[int8]int8 {
	m := map[int8]int8{}
	for i, n := range dateLayouts {
		if n.twin >= 0 || n.alias >= 0 || !strings.Contains(n.layout, "15:04") || strings.Contains(n.layout, "15:04:05") {
			continue
		}
		wide := strings.Replace(n.layout, "15:04", "15:04:05", 1)
		for j, w := range dateLayouts {
			if w.layout == wide && w.twin < 0 && w.alias < 0 {
				m[int8(i)] = int8(j)
			}
		}
	}
	return m
}()

// dateFamilies are the index ranges of dateLayouts by leading shape.
var (
	famISO      = []int8{0, 1, 2, 3, 4, 5}
	famYearSl   = []int8{6, 7}
	famSlash    = []int8{8, 9, 10, 11, 12, 13, 14, 15, 16, 17}
	famDash     = []int8{18, 19, 20, 21, 22}
	famDot      = []int8{23, 24, 25}
	famTime     = []int8{26, 27}
	famMonth    = []int8{28, 29, 30}
	famDayMonth = []int8{31, 32}
	maxDateExam = 8
)

// dateFamily returns the layouts worth trying for s, from its first run
// of digits and the separator after it.
func dateFamily(s string) []int8 {
	if monthFirst(s) {
		return famMonth
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || n == len(s) {
		return nil
	}
	switch sep := s[n]; {
	case n == 4 && sep == '-':
		return famISO
	case n == 4 && sep == '/':
		return famYearSl
	case n > 2:
		return nil
	case sep == '/':
		return famSlash
	case sep == '-':
		return famDash
	case sep == '.':
		return famDot
	case sep == ':':
		return famTime
	case sep == ' ' && monthFirst(s[n+1:]):
		return famDayMonth
	}
	return nil
}

// monthFirst reports whether s starts with an English month's name or
// its three-letter abbreviation, capitalised as Go's parser wants it.
func monthFirst(s string) bool {
	if len(s) < 3 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for m := time.January; m <= time.December; m++ {
		if s[:3] == m.String()[:3] {
			return true
		}
	}
	return false
}

func parseLayout(i int8, s string) (float64, bool) {
	t, err := time.Parse(dateLayouts[i].layout, s)
	if err != nil {
		return 0, false
	}
	return float64(t.Unix()), true
}

// parseDate finds the layouts that parse s: the first one of its family
// that does (the last layout that worked is tried first), and that
// layout's day/month twin or month-name alias. It sets vi.layout, vi.f
// and, when the twin or alias parses too, vi.layout2 and vi.f2.
func (c *colAcc) parseDate(s string, vi *valInfo) bool {
	fam := dateFamily(s)
	if fam == nil {
		return false
	}
	vi.layout, vi.layout2 = -1, -1
	found := int8(-1)
	if c.dCur >= 0 {
		for _, i := range fam {
			if i == c.dCur {
				if f, ok := parseLayout(i, s); ok {
					found, vi.f = i, f
				}
				break
			}
		}
	}
	if found < 0 {
		for _, i := range fam {
			if i == c.dCur {
				continue
			}
			if f, ok := parseLayout(i, s); ok {
				found, vi.f = i, f
				break
			}
		}
	}
	if found < 0 {
		return false
	}
	c.dCur = found
	vi.layout = found
	other := dateLayouts[found].twin // a layout has a twin or an alias, not both
	if other < 0 {
		other = dateLayouts[found].alias
	}
	if other >= 0 {
		if f, ok := parseLayout(other, s); ok {
			vi.layout2, vi.f2 = other, f
		}
	}
	if wide, ok := widerLayouts[found]; ok {
		vi.layout2, vi.f2 = wide, vi.f // no twin or alias to displace
	}
	if len(c.dExam) < maxDateExam {
		c.dExam = append(c.dExam, dateExample{s: strings.Clone(clip(s, 40)), l1: vi.layout, l2: vi.layout2})
	}
	return true
}

// dateExample is a date value seen early and the layouts that parse it,
// kept to name a value that the column's layout does not parse.
type dateExample struct {
	s      string
	l1, l2 int8
}

// addDate counts one occurrence of a date parsed as f under layout l.
func (c *colAcc) addDate(l int8, f float64) {
	if c.dCount == nil {
		n := len(dateLayouts)
		c.dCount = make([]int64, n)
		c.dMin, c.dMax = make([]float64, n), make([]float64, n)
		c.dSk = make([]*kll, n)
	}
	if c.dCount[l] == 0 || f < c.dMin[l] {
		c.dMin[l] = f
	}
	if c.dCount[l] == 0 || f > c.dMax[l] {
		c.dMax[l] = f
	}
	c.dCount[l]++
	if c.overflow {
		if c.dSk[l] == nil {
			c.dSk[l] = newKLL(kllK)
		}
		c.dSk[l].add(f)
	}
}

// dateLayoutChoice returns the layout parsing the most values and the
// number it parses; of a layout and its wider one (widerLayouts) parsing
// as many, the narrower.
func (c *colAcc) dateLayoutChoice() (int8, int64) {
	best := int8(0)
	for i, n := range c.dCount {
		if n > c.dCount[best] {
			best = int8(i)
		}
	}
	for narrow, wide := range widerLayouts {
		if wide == best && c.dCount[narrow] == c.dCount[best] {
			best = narrow
		}
	}
	return best, c.dCount[best]
}

// dateValue is vi's date under layout l.
func dateValue(vi *valInfo, l int8) (float64, bool) {
	switch l {
	case vi.layout:
		return vi.f, true
	case vi.layout2:
		return vi.f2, true
	}
	return 0, false
}
