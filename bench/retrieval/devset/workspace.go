package devset

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/selmem/selmem/memstore"
)

// item is one section of workspace memory with the queries that look for
// it, by class: "paraphrase" restates it in other words, "synonym" uses
// synonyms of its key words, "abbreviation" abbreviates them, "heading"
// uses words found only in its heading. A typo query is derived from the
// paraphrase. Templates take the workspace's slot values.
type item struct {
	file    string // task.md, output.md or notes/decisions.md
	heading string
	body    string
	queries map[string]string
}

var items = []item{
	{"task.md", "Fiscal calendar", "- Quarters follow the fiscal year, which starts on 1 {month}.\n- Never label a quarter by calendar months.",
		map[string]string{"paraphrase": "when does the financial year begin", "abbreviation": "FY start month", "heading": "fiscal calendar"}},
	{"task.md", "Refunds", "- Customers may return goods within {days} days for their money back.\n- Store credit only after that window.",
		map[string]string{"paraphrase": "how long can a customer send items back", "synonym": "reimbursement period for returned purchases", "heading": "refunds"}},
	{"task.md", "Currency", "- Report every amount in {currency}, converted at the month-end rate.\n- Show the original amount in a tooltip.",
		map[string]string{"paraphrase": "which money unit should figures be shown in", "synonym": "monetary denomination for totals", "abbreviation": "FX conversion rate month end"}},
	{"task.md", "Time zone", "- Timestamps are stored in UTC and shown in {tz}.\n- Day boundaries follow {tz}.",
		map[string]string{"paraphrase": "what clock should dates be displayed in", "abbreviation": "TZ for displaying timestamps", "heading": "time zone"}},
	{"task.md", "Personal data", "- Never show names, e-mail addresses or phone numbers of individuals.\n- Aggregate to groups of at least {k} people.",
		map[string]string{"paraphrase": "can I display customer emails", "abbreviation": "PII handling", "synonym": "privacy rule for individual contact details"}},
	{"task.md", "Churn definition", "- A customer is lost when they have no paid order for {days} days.\n- Reactivated customers count as new.",
		map[string]string{"paraphrase": "when do we consider a client gone", "synonym": "attrition rule for clients", "heading": "churn definition"}},
	{"task.md", "Rounding", "- Round percentages to one decimal place and amounts to whole units.\n- Never round intermediate results.",
		map[string]string{"paraphrase": "how many decimals for percent values", "synonym": "precision of ratios in reports"}},
	{"task.md", "Data freshness", "- Refuse to publish when the newest row is older than {hours} hours.\n- Say how stale the data is.",
		map[string]string{"paraphrase": "what if the latest records are too old", "synonym": "staleness limit before publishing", "heading": "data freshness"}},
	{"task.md", "Escalation", "- Page the on-call analyst, {person}, when a metric moves more than {pct} percent in a day.",
		map[string]string{"paraphrase": "who do I alert about a sudden metric jump", "synonym": "contact for abnormal swings in numbers", "heading": "escalation"}},
	{"task.md", "Week start", "- Weeks start on {weekday}; weekly charts use ISO week numbers.",
		map[string]string{"paraphrase": "which day does the week begin on", "abbreviation": "ISO wk numbering first day"}},
	{"task.md", "Revenue recognition", "- Count revenue when the order ships, not when it is booked.\n- Cancelled orders reverse their revenue.",
		map[string]string{"paraphrase": "when is income counted for an order", "synonym": "booking versus shipment for sales figures", "abbreviation": "rev rec rule"}},
	{"task.md", "Test accounts", "- Exclude accounts whose e-mail ends in @{domain} or whose name starts with TEST.",
		map[string]string{"paraphrase": "filter out internal dummy customers", "synonym": "ignore fake users in the numbers", "heading": "test accounts"}},
	{"task.md", "Targets", "- The quarterly target is {target} units; show progress as a bar against it.",
		map[string]string{"paraphrase": "what goal number should progress be measured against", "synonym": "quarterly quota for the team", "heading": "targets"}},
	{"task.md", "Regions", "- Group countries into the regions of the {regionlist} list; unknown countries go to Other.",
		map[string]string{"paraphrase": "how are countries bucketed geographically", "synonym": "territory grouping of nations"}},
	{"task.md", "Tone", "- Write summaries for executives: three bullet points, no jargon, numbers first.",
		map[string]string{"paraphrase": "how should the summary text be written for leadership", "synonym": "style of the management digest"}},
	{"output.md", "Data injection", "- The page reads its data from window.__DATA__, injected at serve time.\n- Never fetch data over the network.",
		map[string]string{"paraphrase": "how does the dashboard get its rows", "synonym": "where the visualisation loads records from", "heading": "data injection"}},
	{"output.md", "Chart library", "- Charts use {chartlib}; no other plotting library is allowed.",
		map[string]string{"paraphrase": "which plotting package may I use", "synonym": "permitted graphing toolkit", "heading": "chart library"}},
	{"output.md", "Colours", "- Use the brand palette: primary {color}, negatives in red, never rainbow scales.",
		map[string]string{"paraphrase": "what colors should the charts have", "synonym": "palette hues for the graphs"}},
	{"output.md", "Accessibility", "- Every chart needs a text alternative and a contrast ratio of at least 4.5:1.",
		map[string]string{"paraphrase": "alt text and contrast requirements", "abbreviation": "a11y rules", "heading": "accessibility"}},
	{"output.md", "File format", "- Exports are {format} files with a header row, UTF-8, no byte order mark.",
		map[string]string{"paraphrase": "what format should downloads be in", "synonym": "export encoding and layout", "abbreviation": "BOM in exported files"}},
	{"output.md", "Page size", "- Tables show {rows} rows per page and sort by date, newest first.",
		map[string]string{"paraphrase": "how many lines per table page", "synonym": "pagination length of grids"}},
	{"output.md", "Content security", "- The artifact runs under a strict CSP: no inline scripts, no external fonts.",
		map[string]string{"paraphrase": "can I load google fonts in the page", "abbreviation": "CSP restrictions", "heading": "content security"}},
	{"notes/decisions.md", "Dropped the legacy CRM export", "We stopped using the nightly CSV from the old customer system on {date}; the warehouse table replaces it.",
		map[string]string{"paraphrase": "why is the nightly customer csv no longer used", "abbreviation": "old CRM CSV", "heading": "legacy CRM export"}},
	{"notes/decisions.md", "Switched to weekly cadence", "Reports go out every {weekday} morning instead of daily, agreed with {person}.",
		map[string]string{"paraphrase": "how often are reports sent now", "synonym": "frequency of report delivery", "heading": "weekly cadence"}},
	{"notes/decisions.md", "Discount outliers", "Orders with a discount above {pct} percent are excluded from average price; they are staff purchases.",
		map[string]string{"paraphrase": "why are heavily reduced orders left out of mean price", "synonym": "markdown anomalies in average calculations", "heading": "discount outliers"}},
	{"notes/decisions.md", "Warehouse migration", "The analytics database moved to the new cluster on {date}; old dashboards still point at the replica.",
		map[string]string{"paraphrase": "when did the analytics db move", "abbreviation": "DWH migration date", "synonym": "data store relocation"}},
}

// tool is a tool configuration file with its queries.
type tool struct {
	name, kind, env, note string
	queries               map[string]string
}

var toolDefs = []tool{
	{"warehouse", "postgres", "WAREHOUSE_DSN", "Read-only replica; run heavy queries after 18:00 UTC.",
		map[string]string{"paraphrase": "which environment variable holds the database connection", "abbreviation": "DB creds env var", "synonym": "secret for the analytics store"}},
	{"crm", "rest", "CRM_API_TOKEN", "Rate limited to 10 requests per second; paginate with the cursor field.",
		map[string]string{"paraphrase": "how fast can I call the customer system API", "synonym": "throttling of the client management service", "abbreviation": "CRM API rate limit"}},
	{"sheets", "google_sheets", "SHEETS_SERVICE_ACCOUNT", "The targets spreadsheet is owned by finance; never write to it.",
		map[string]string{"paraphrase": "may I edit the spreadsheet with goals", "synonym": "write access to the quota workbook"}},
	{"mailer", "smtp", "SMTP_PASSWORD", "Send from reports@ only; attach exports under 5 MB.",
		map[string]string{"paraphrase": "what sender address do emails use", "synonym": "maximum attachment size for mailed reports"}},
	{"s3", "object_store", "AWS_ACCESS_KEY_ID", "Bucket holds raw event dumps partitioned by day; lifecycle deletes after 90 days.",
		map[string]string{"paraphrase": "how long are the raw event files kept", "abbreviation": "S3 retention"}},
}

// schemaDef is a data source profile with its queries.
type schemaDef struct {
	source  string
	columns [][2]string // name, description
	queries map[string]string
}

var schemaDefs = []schemaDef{
	{"orders", [][2]string{{"order_id", "integer, unique, candidate key"}, {"cust_ref", "text, joins customers.id, 0% null"}, {"placed_at", "timestamp, 2021-01-03 to 2024-06-30"}, {"net_amount", "decimal, mean 84.2, p99 910"}, {"status", "categorical: shipped 71%, cancelled 9%, pending 20%"}},
		map[string]string{"paraphrase": "which column links orders to customers", "synonym": "foreign key from purchases to clients", "heading": "orders columns"}},
	{"customers", [][2]string{{"id", "text, unique"}, {"segment", "categorical: retail 64%, wholesale 30%, partner 6%"}, {"signup_date", "date, 2015 to 2024"}, {"country", "ISO 3166 code, 48 distinct"}},
		map[string]string{"paraphrase": "what segments do clients fall into", "synonym": "customer tiers and their shares"}},
	{"web_sessions", [][2]string{{"session_id", "uuid, unique"}, {"visitor", "hashed cookie id"}, {"started", "timestamp"}, {"pages", "integer, median 3"}, {"source", "categorical: organic 40%, paid 35%, email 25%"}},
		map[string]string{"paraphrase": "where do website visits come from", "synonym": "traffic channel breakdown", "abbreviation": "utm source share"}},
}

var (
	domains    = []string{"sales", "finance", "support", "marketing", "logistics", "hr", "retail", "growth", "billing", "ops"}
	regions    = []string{"emea", "apac", "na", "latam", "nordics"}
	months     = []string{"February", "April", "July", "October"}
	currencies = []string{"EUR", "USD", "GBP", "JPY", "SEK"}
	zones      = []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "Europe/London", "America/Sao_Paulo"}
	weekdays   = []string{"Monday", "Sunday", "Saturday"}
	persons    = []string{"Ines Duarte", "Tomasz Nowak", "Aiko Sato", "Ben Okafor", "Clara Weiss", "Raj Mehta"}
	chartlibs  = []string{"Vega-Lite", "ECharts", "Chart.js", "Plotly"}
	colors     = []string{"teal", "navy", "orange", "violet"}
	formats    = []string{"CSV", "TSV", "XLSX", "Parquet"}
	dates      = []string{"3 March 2024", "17 June 2024", "9 September 2023", "28 January 2024"}
	domainsMx  = []string{"example.org", "internal.test", "qa.local"}
	regionList = []string{"UN geoscheme", "company sales", "IMF"}
)

// Workspaces generates n workspaces of product-like memory: task rules,
// output constraints, tool configurations, source profiles and decision
// notes, each workspace with its own values, and queries of five classes
// (paraphrase, synonym, abbreviation, typo, heading). Most queries are
// restricted to their workspace; about a third search every workspace and
// name the workspace's domain instead.
func Workspaces(seed uint64, n int) Set {
	g := newGen(seed)
	set := Set{Files: map[string]string{}}
	for w := range n {
		domain := domains[w%len(domains)]
		ws := fmt.Sprintf("%s-%s", domain, regions[(w/len(domains))%len(regions)])
		if w >= len(domains)*len(regions) {
			ws += fmt.Sprintf("-%d", w)
		}
		vars := map[string]string{
			"month": pick(g, months), "days": fmt.Sprint(14 + 7*g.r.IntN(8)), "currency": pick(g, currencies),
			"tz": pick(g, zones), "k": fmt.Sprint(5 + g.r.IntN(10)), "hours": fmt.Sprint(6 * (1 + g.r.IntN(8))),
			"person": pick(g, persons), "pct": fmt.Sprint(10 + 5*g.r.IntN(7)), "weekday": pick(g, weekdays),
			"domain": pick(g, domainsMx), "target": fmt.Sprint(1000 * (1 + g.r.IntN(40))), "regionlist": pick(g, regionList),
			"chartlib": pick(g, chartlibs), "color": pick(g, colors), "format": pick(g, formats),
			"rows": fmt.Sprint(25 * (1 + g.r.IntN(4))), "date": pick(g, dates),
		}
		var qs []Query
		addQueries := func(rel, heading string, tmpl map[string]string) {
			ref := Ref{Path: "/memories/" + rel, Heading: heading}
			for _, class := range slices.Sorted(maps.Keys(tmpl)) {
				text := fill(tmpl[class], vars)
				qs = append(qs, Query{Class: class, Text: text, Relevant: []Ref{ref}})
				if class == "paraphrase" && g.chance(0.5) {
					qs = append(qs, Query{Class: "typo", Text: g.typoQuery(text), Relevant: []Ref{ref}})
				}
			}
		}
		// Each workspace holds 20 of the items, its own selection.
		files := map[string]*strings.Builder{}
		for _, ii := range g.r.Perm(len(items))[:20] {
			it := items[ii]
			b := files[it.file]
			if b == nil {
				b = &strings.Builder{}
				title := map[string]string{"task.md": "Task rules", "output.md": "Output constraints", "notes/decisions.md": "Decisions"}[it.file]
				fmt.Fprintf(b, "---\ntype: %s\nsource: user_confirmed\n---\n# %s\n\n", strings.TrimSuffix(strings.TrimPrefix(it.file, "notes/"), ".md"), title)
				files[it.file] = b
			}
			fmt.Fprintf(b, "## %s\n\n%s\n\n", it.heading, fill(it.body, vars))
			addQueries("workspaces/"+ws+"/"+it.file, it.heading, it.queries)
		}
		for f, b := range files {
			set.Files["workspaces/"+ws+"/"+f] = b.String()
		}
		for _, ti := range g.r.Perm(len(toolDefs))[:3] {
			t := toolDefs[ti]
			rel := "workspaces/" + ws + "/tools/" + t.name + ".yaml"
			set.Files[rel] = fmt.Sprintf("name: %s\nkind: %s\nendpoint: https://%s.%s.internal/api\nauth:\n  env: %s\nparameters:\n  - name: query\n    type: string\nnotes: %s\n",
				t.name, t.kind, t.name, ws, t.env, t.note)
			addQueries(rel, "", t.queries)
		}
		for _, si := range g.r.Perm(len(schemaDefs))[:2] {
			s := schemaDefs[si]
			rel := "workspaces/" + ws + "/schemas/" + s.source + ".md"
			var b strings.Builder
			fmt.Fprintf(&b, "---\ntype: schema\nsource: trusted_tool_result\n---\n# %s\n\n## Summary\n\n%d rows, profiled on %s.\n\n## Columns\n\n| column | profile |\n|---|---|\n",
				s.source, 10000+g.r.IntN(900000), vars["date"])
			for _, c := range s.columns {
				fmt.Fprintf(&b, "| %s | %s |\n", c[0], c[1])
			}
			set.Files[rel] = b.String()
			addQueries(rel, "Columns", s.queries)
		}
		for k := range qs {
			qs[k].ID = fmt.Sprintf("%s-q%03d", ws, k+1)
			qs[k].Set = "workspace"
			if g.chance(0.3) {
				// Unfiltered: the query names the domain instead.
				qs[k].Text = domain + " " + qs[k].Text
			} else {
				qs[k].Workspace = ws
			}
		}
		set.Queries = append(set.Queries, qs...)
	}
	return set
}

// nonsenseWords build queries that match nothing in either set: made-up
// words and real words absent from the generated memory.
var nonsenseWords = []string{"xylophone", "quasar", "blorfix", "zantrop", "quibbleworth", "nebulon", "fjordly", "kumquat",
	"trombone", "galvanic", "pterodactyl", "marzipan", "zeppelin", "obsidian", "wombat", "glockenspiel", "quokka",
	"snorkel", "vortigaunt", "plinth", "crumhorn", "mizzenmast", "gazpacho", "tesseract", "yodel", "lichen"}

// commonWords are everyday English words that the generated memories do
// not use, nor any word of the same stem (devset_test checks): nonsense
// made of real words, which have synonyms, inflections and neighbours one
// letter away in any memory.
var commonWords = []string{"umbrella", "nutmeg", "glacier", "pelican", "saddle", "lasso", "kayak", "kettle",
	"blanket", "chimney", "meadow", "thunder", "pebble", "ladder", "cactus", "walrus", "compass", "anchor",
	"marble", "moth", "acorn", "pumpkin", "castle", "dragon", "whistle", "feather", "barrel", "canyon",
	"volcano", "jungle", "carpet", "mirror", "needle", "ribbon", "scarf", "helmet", "puzzle", "quilt",
	"turtle", "bishop", "knight", "sailor", "shepherd", "carpenter", "jester", "whisper", "gallop", "juggle",
	"sneeze", "stumble", "wander", "shiver", "paddle", "gentle", "fuzzy", "humid", "rusty", "shiny",
	"sleepy", "crooked", "hollow", "ancient", "frozen", "wooden", "purple", "bitter", "salty", "clumsy",
	"elbow", "harp", "eyebrow", "beard", "pillow", "spoon", "badger", "shovel", "broom", "glove",
	"penguin", "giraffe", "squirrel", "beaver", "otter", "raven", "swan", "oyster", "lobster", "cherry",
	"walnut", "ginger", "garlic", "onion", "lemon", "honey", "cheese", "saucer", "goblet", "cloak"}

// Nonsense returns n queries of two or three words that match nothing in
// files, each restricted to one of workspaces in turn: made-up and rare
// words, none of whose stems a file holds.
func Nonsense(seed uint64, n int, workspaces []string, files map[string]string) []Query {
	return nonsense(seed, n, workspaces, "nonsense", absent(nonsenseWords, files))
}

// CommonNonsense is Nonsense of everyday English words (set
// "nonsense-common"), which a dictionary knows and relates to others.
func CommonNonsense(seed uint64, n int, workspaces []string, files map[string]string) []Query {
	return nonsense(seed, n, workspaces, "nonsense-common", absent(commonWords, files))
}

// absent returns the words of words no file of files holds a word of the
// stem of: a set written elsewhere may well mention a kettle.
func absent(words []string, files map[string]string) []string {
	held := map[string]bool{}
	for _, content := range files {
		memstore.Words(content, func(w string) { held[memstore.Stem(w)] = true })
	}
	var out []string
	for _, w := range words {
		if !held[memstore.Stem(w)] {
			out = append(out, w)
		}
	}
	return out
}

func nonsense(seed uint64, n int, workspaces []string, set string, words []string) []Query {
	g := newGen(seed)
	out := make([]Query, n)
	for i := range out {
		ws := make([]string, 2+g.r.IntN(2))
		for k := range ws {
			ws[k] = pick(g, words)
		}
		out[i] = Query{ID: fmt.Sprintf("%s-q%03d", set, i+1), Set: set, Class: "nonsense", Text: strings.Join(ws, " ")}
		if len(workspaces) > 0 {
			out[i].Workspace = workspaces[i%len(workspaces)]
		}
	}
	return out
}
