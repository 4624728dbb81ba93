package profiler

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The two tables that cannot be copied here are generated as
// deterministic look-alikes: a 46-column city service-request table shaped
// like NYC 311 (AM/PM timestamps, boroughs, ZIP codes with placeholder
// codes 88888 and 99999, long resolution texts) and a 24-column orders
// table shaped like the Global Superstore (over 10,000 distinct order ids
// such as CA-2012-102015, DD-MM-YYYY dates, decimals), also written
// ;-delimited with decimal commas.

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// skewed picks from xs with weights falling like 1/(i+1).
func skewed(r *rand.Rand, xs []string) string {
	total := 0.0
	for i := range xs {
		total += 1 / float64(i+1)
	}
	x := r.Float64() * total
	for i := range xs {
		x -= 1 / float64(i+1)
		if x <= 0 {
			return xs[i]
		}
	}
	return xs[len(xs)-1]
}

func csvCell(s string, delim byte) string {
	if strings.ContainsAny(s, string(delim)+"\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func writeRow(b *strings.Builder, cells []string, delim byte) {
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(delim)
		}
		b.WriteString(csvCell(c, delim))
	}
	b.WriteByte('\n')
}

var nycColumns = []string{"Unique Key", "Created Date", "Closed Date", "Agency", "Agency Name", "Complaint Type",
	"Descriptor", "Location Type", "Incident Zip", "Incident Address", "Street Name", "Cross Street 1",
	"Cross Street 2", "Intersection Street 1", "Intersection Street 2", "Address Type", "City", "Landmark",
	"Facility Type", "Status", "Due Date", "Resolution Description", "Resolution Action Updated Date",
	"Community Board", "BBL", "Borough", "X Coordinate (State Plane)", "Y Coordinate (State Plane)",
	"Open Data Channel Type", "Park Facility Name", "Park Borough", "Vehicle Type", "Taxi Company Borough",
	"Taxi Pick Up Location", "Bridge Highway Name", "Bridge Highway Direction", "Road Ramp",
	"Bridge Highway Segment", "Latitude", "Longitude", "Location", "Zip Codes", "Community Districts",
	"Borough Boundaries", "City Council Districts", "Police Precincts"}

var (
	nycAgencies = []string{"NYPD", "HPD", "DSNY", "DOT", "DEP", "DOB", "DPR", "DOHMH", "DHS", "TLC", "DCA", "EDC"}
	nycAgencyNm = map[string]string{"NYPD": "New York City Police Department", "HPD": "Department of Housing Preservation and Development",
		"DSNY": "Department of Sanitation", "DOT": "Department of Transportation", "DEP": "Department of Environmental Protection",
		"DOB": "Department of Buildings", "DPR": "Department of Parks and Recreation", "DOHMH": "Department of Health and Mental Hygiene",
		"DHS": "Department of Homeless Services", "TLC": "Taxi and Limousine Commission", "DCA": "Department of Consumer Affairs",
		"EDC": "Economic Development Corporation"}
	nycBoroughs   = []string{"BROOKLYN", "QUEENS", "MANHATTAN", "BRONX", "STATEN ISLAND", "Unspecified"}
	nycStatus     = []string{"Closed", "Open", "In Progress", "Pending", "Assigned", "Started"}
	nycResolution = []string{
		"The Police Department responded to the complaint and with the information available observed no evidence of the violation at that time.",
		"The Police Department responded to the complaint and took action to fix the condition.",
		"The Police Department responded to the complaint and determined that police action was not necessary.",
		"The Police Department responded to the complaint and a report was prepared.",
		"The Police Department responded and upon arrival those responsible for the condition were gone.",
		"The Department of Housing Preservation and Development inspected the following conditions. No violations were issued. The complaint has been closed.",
		"The Department of Housing Preservation and Development inspected the following conditions. Violations were issued. Information about specific violations is available at www.nyc.gov/hpd.",
		"The Department of Sanitation investigated this complaint and found no violation at the location.",
		"The Department of Sanitation picked up the items.",
		"The Department of Transportation inspected this complaint and repaired the problem.",
		"The Department of Transportation inspected the condition you reported and determined that a defect does not exist.",
		"The Department of Environmental Protection investigated this complaint and shut the running hydrant.",
		"The Department of Buildings investigated this complaint and issued an Environmental Control Board violation.",
		"Your request can not be processed at this time because of insufficient contact information.",
		"This complaint does not fall under the Police Department's jurisdiction.",
		" The complaint has been forwarded to the agency responsible.",
		"N/A",
	}
	nycComplaints = func() []string {
		base := []string{"Noise - Residential", "HEAT/HOT WATER", "Illegal Parking", "Blocked Driveway", "Noise - Street/Sidewalk",
			"Street Condition", "UNSANITARY CONDITION", "Water System", "Request Large Bulky Item Collection", "PLUMBING",
			"General Construction/Plumbing", "Noise - Commercial", "Sewer", "Traffic Signal Condition", "Dirty Conditions",
			"Street Light Condition", "Noise - Vehicle", "PAINT/PLASTER", "Rodent", "Sanitation Condition", "Damaged Tree",
			"Derelict Vehicles", "Abandoned Vehicle", "Graffiti", "Elevator", "DOOR/WINDOW", "Missed Collection", "Building/Use",
			"Homeless Person Assistance", "Taxi Complaint", "Consumer Complaint", "Food Establishment", "Non-Emergency Police Matter",
			"Sidewalk Condition", "Snow", "ELECTRIC", "Air Quality", "Lead", "Broken Meter", "Curb Condition"}
		return base
	}()
	nycLocTypes = []string{"RESIDENTIAL BUILDING", "Street/Sidewalk", "Residential Building/House", "Street", "Sidewalk", "Club/Bar/Restaurant", "Store/Commercial", "Park/Playground", "Highway", "Vacant Lot", "Commercial", "Subway Station", "School", "Hospital", "Other"}
	nycCities   = []string{"BROOKLYN", "NEW YORK", "BRONX", "STATEN ISLAND", "JAMAICA", "FLUSHING", "ASTORIA", "RIDGEWOOD", "CORONA", "WOODSIDE", "ELMHURST", "FAR ROCKAWAY", "SOUTH RICHMOND HILL", "OZONE PARK", "EAST ELMHURST", "FRESH MEADOWS", "BAYSIDE", "JACKSON HEIGHTS", "FOREST HILLS", "REGO PARK", "MASPETH", "MIDDLE VILLAGE", "WHITESTONE", "COLLEGE POINT", "SPRINGFIELD GARDENS", "ST. ALBANS", "HOLLIS", "QUEENS VILLAGE", "SOUTH OZONE PARK", "HOWARD BEACH", "KEW GARDENS", "RICHMOND HILL", "WOODHAVEN", "ARVERNE", "ROCKAWAY PARK", "LONG ISLAND CITY", "SUNNYSIDE", "CAMBRIA HEIGHTS", "ROSEDALE", "LITTLE NECK", "GLEN OAKS", "BELLEROSE", "OAKLAND GARDENS", "FLORAL PARK", "NEW HYDE PARK", "BREEZY POINT", "BROAD CHANNEL", "QUEENS", "MANHATTAN", "Unspecified"}
	nycStreets  = func() []string {
		var s []string
		kinds := []string{"AVENUE", "STREET", "ROAD", "PLACE", "BOULEVARD", "PARKWAY"}
		for i := 1; i <= 300; i++ {
			s = append(s, fmt.Sprintf("%s %d %s", []string{"EAST", "WEST", "NORTH", "SOUTH", ""}[i%5], i, kinds[i%len(kinds)]))
		}
		for i := range s {
			s[i] = strings.TrimSpace(s[i])
		}
		return s
	}()
	nycParks    = []string{"Unspecified", "Central Park", "Prospect Park", "Flushing Meadows Corona Park", "Van Cortlandt Park", "Pelham Bay Park", "Riverside Park", "Marine Park", "Forest Park", "Alley Pond Park", "Clove Lakes Park", "Fort Greene Park"}
	nycBridges  = []string{"BQE/Gowanus Expwy", "FDR Dr", "Belt Pkwy", "Cross Island Pkwy", "Grand Central Pkwy", "Long Island Expwy", "Major Deegan Expwy", "Van Wyck Expwy", "Staten Island Expwy", "Cross Bronx Expwy", "Henry Hudson Pkwy", "Brooklyn Bridge", "Queensboro Bridge", "Williamsburg Bridge"}
	nycDirs     = []string{"North/Westbound", "South/Eastbound", "Northbound", "Southbound", "Eastbound", "Westbound", "Brooklyn Bound", "Manhattan Bound"}
	nycChannels = []string{"PHONE", "ONLINE", "MOBILE", "UNKNOWN", "OTHER"}
)

// nycTime formats t as the city's open data does: 02/28/2023 11:45:00 PM.
func nycTime(t time.Time) string { return t.Format("01/02/2006 03:04:05 PM") }

// genNYC311 writes a NYC-311-like table of n rows.
func genNYC311(n int) string {
	r := rand.New(rand.NewPCG(311, 46))
	var b strings.Builder
	writeRow(&b, nycColumns, ',')
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	zips := make([]string, 180)
	for i := range zips {
		zips[i] = strconv.Itoa(10001 + i*9)
	}
	for i := range n {
		created := start.Add(time.Duration(r.Int64N(int64(365 * 24 * time.Hour))))
		created = created.Truncate(time.Second)
		closed := created.Add(time.Duration(r.Int64N(int64(20 * 24 * time.Hour)))).Truncate(time.Second)
		ag := skewed(r, nycAgencies)
		boro := skewed(r, nycBoroughs)
		zip := skewed(r, zips)
		switch {
		case i%293 == 17 && i < 293*34:
			zip = "88888"
		case i%379 == 5 && i < 379*26:
			zip = "99999"
		case r.IntN(50) == 0:
			zip = ""
		}
		opt := func(pct int, v string) string {
			if r.IntN(100) < pct {
				return v
			}
			return ""
		}
		street := pick(r, nycStreets)
		lat := 40.5 + r.Float64()*0.4
		lon := -74.25 + r.Float64()*0.55
		closedS := nycTime(closed)
		if r.IntN(30) == 0 {
			closedS = ""
		}
		cb := fmt.Sprintf("%02d %s", 1+r.IntN(18), boro)
		if boro == "Unspecified" {
			cb = "0 Unspecified"
		}
		bbl := ""
		if r.IntN(5) > 0 {
			bbl = strconv.FormatInt(1000000000+r.Int64N(4000000000), 10)
		}
		row := []string{
			strconv.Itoa(56000000 + i*3 + r.IntN(3)),
			nycTime(created),
			closedS,
			ag,
			nycAgencyNm[ag],
			skewed(r, nycComplaints),
			fmt.Sprintf("Descriptor %d", r.IntN(80)),
			opt(85, skewed(r, nycLocTypes)),
			zip,
			opt(80, fmt.Sprintf("%d %s", 1+r.IntN(3000), street)),
			opt(85, street),
			opt(70, pick(r, nycStreets)),
			opt(70, pick(r, nycStreets)),
			opt(20, pick(r, nycStreets)),
			opt(20, pick(r, nycStreets)),
			opt(99, skewed(r, []string{"ADDRESS", "INTERSECTION", "BLOCKFACE", "LATLONG", "PLACENAME"})),
			opt(95, skewed(r, nycCities)),
			opt(5, fmt.Sprintf("LANDMARK %d", r.IntN(60))),
			opt(40, skewed(r, []string{"N/A", "Precinct", "DSNY Garage", "School"})),
			skewed(r, nycStatus),
			opt(40, nycTime(created.Add(time.Duration(r.Int64N(int64(30*24*time.Hour)))).Truncate(time.Second))),
			opt(97, skewed(r, nycResolution)),
			opt(98, nycTime(closed.Add(-time.Duration(r.Int64N(3600))*time.Second))),
			cb,
			bbl,
			boro,
			strconv.Itoa(913000 + r.IntN(154000)),
			strconv.Itoa(120000 + r.IntN(152000)),
			skewed(r, nycChannels),
			skewed(r, nycParks),
			boro,
			opt(1, skewed(r, []string{"Car Service", "Green Taxi", "Ambulette / Paratransit", "Commuter Van"})),
			opt(1, skewed(r, nycBoroughs[:5])),
			opt(1, skewed(r, []string{"Other", "JFK Airport", "La Guardia Airport", "Intersection", "Street"})),
			opt(2, skewed(r, nycBridges)),
			opt(2, skewed(r, nycDirs)),
			opt(2, skewed(r, []string{"Roadway", "Ramp"})),
			opt(2, fmt.Sprintf("Exit %d (%s)", 1+r.IntN(30), pick(r, nycBridges))),
			strconv.FormatFloat(lat, 'f', 8, 64),
			strconv.FormatFloat(lon, 'f', 8, 64),
			fmt.Sprintf("(%s, %s)", strconv.FormatFloat(lat, 'f', 8, 64), strconv.FormatFloat(lon, 'f', 8, 64)),
			strconv.Itoa(10000 + r.IntN(230)),
			strconv.Itoa(1 + r.IntN(77)),
			strconv.Itoa(1 + r.IntN(5)),
			strconv.Itoa(1 + r.IntN(51)),
			strconv.Itoa(1 + r.IntN(77)),
		}
		writeRow(&b, row, ',')
	}
	return b.String()
}

var superstoreColumns = []string{"Row ID", "Order ID", "Order Date", "Ship Date", "Ship Mode", "Customer ID",
	"Customer Name", "Segment", "City", "State", "Country", "Postal Code", "Market", "Region", "Product ID",
	"Category", "Sub-Category", "Product Name", "Sales", "Quantity", "Discount", "Profit", "Shipping Cost",
	"Order Priority"}

// genSuperstore writes a Global-Superstore-like orders table of about n
// rows (whole orders of one to seven lines). With decimalComma the file
// is ;-delimited and decimals are written 261,96.
func genSuperstore(n int, decimalComma bool) string {
	r := rand.New(rand.NewPCG(2012, 102015))
	delim := byte(',')
	if decimalComma {
		delim = ';'
	}
	dec := func(v float64, prec int) string {
		s := strconv.FormatFloat(v, 'f', prec, 64)
		if decimalComma {
			s = strings.Replace(s, ".", ",", 1)
		}
		return s
	}
	var b strings.Builder
	writeRow(&b, superstoreColumns, delim)
	markets := []string{"APAC", "EU", "US", "LATAM", "EMEA", "Africa", "Canada"}
	regions := []string{"Central", "South", "East", "West", "North", "Oceania", "Southeast Asia", "North Asia", "Central Asia", "Caribbean", "Africa", "EMEA", "Canada"}
	prefixes := []string{"CA", "US", "IN", "ES", "IT", "MX", "ID", "AG", "UP", "MO"}
	subcats := map[string][]string{
		"Office Supplies": {"Binders", "Storage", "Art", "Paper", "Appliances", "Supplies", "Labels", "Envelopes", "Fasteners"},
		"Technology":      {"Phones", "Copiers", "Machines", "Accessories"},
		"Furniture":       {"Chairs", "Bookcases", "Tables", "Furnishings"},
	}
	cats := []string{"Office Supplies", "Technology", "Furniture"}
	first := []string{"Claire", "Aaron", "Sean", "Ken", "Irene", "Adam", "Bill", "Dave", "Emily", "Greg", "Jane", "Rick", "Maria", "Tom"}
	last := []string{"Gute", "Bergman", "Miller", "Black", "Maddox", "Hart", "Shaw", "Brooks", "Burns", "Guthrie", "Stewart", "Wilson"}
	row := 0
	for order := 0; row < n; order++ {
		year := 2011 + r.IntN(4)
		oid := fmt.Sprintf("%s-%d-%d", pick(r, prefixes), year, 100000+r.IntN(900000))
		odate := time.Date(year, time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
		sdate := odate.AddDate(0, 0, r.IntN(7))
		lines := 1 + r.IntN(4)
		if r.IntN(20) == 0 {
			lines = 5 + r.IntN(3)
		}
		fn, ln := pick(r, first), pick(r, last)
		cust := fmt.Sprintf("%c%c-%d", fn[0], ln[0], 10000+r.IntN(1600)*10)
		market := skewed(r, markets)
		country := fmt.Sprintf("Country %d", r.IntN(147))
		postal := ""
		if market == "US" {
			postal = strconv.Itoa(10000 + r.IntN(89999))
		}
		for l := 0; l < lines && row < n; l++ {
			row++
			cat := skewed(r, cats)
			sub := pick(r, subcats[cat])
			sales := float64(r.IntN(500000))/100 + 0.01
			qty := 1 + r.IntN(14)
			disc := float64(r.IntN(18)) * 0.05
			profit := sales * (0.3 - disc) * r.Float64()
			cells := []string{
				strconv.Itoa(row),
				oid,
				odate.Format("02-01-2006"),
				sdate.Format("02-01-2006"),
				skewed(r, []string{"Standard Class", "Second Class", "First Class", "Same Day"}),
				cust,
				fn + " " + ln,
				skewed(r, []string{"Consumer", "Corporate", "Home Office"}),
				fmt.Sprintf("City %d", r.IntN(3600)),
				fmt.Sprintf("State %d", r.IntN(1000)),
				country,
				postal,
				market,
				pick(r, regions),
				fmt.Sprintf("%s-%s-%d", strings.ToUpper(cat[:3]), strings.ToUpper(sub[:2]), 10000000+r.IntN(4000)),
				cat,
				sub,
				fmt.Sprintf("%s model %d, %s", sub, r.IntN(3700), pick(r, []string{"Black", "Blue", "Red", "Recycled", "Wireless"})),
				dec(sales, 2),
				strconv.Itoa(qty),
				dec(disc, 2),
				dec(profit, 4),
				dec(sales*0.05*r.Float64(), 2),
				skewed(r, []string{"Medium", "High", "Critical", "Low"}),
			}
			writeRow(&b, cells, delim)
		}
	}
	return b.String()
}
