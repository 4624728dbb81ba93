package refresh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
)

// testFrame is a small data set with nulls:
//
//	region amount units day
//	EMEA   10.5   3     2026-11-02
//	AMER   20     4     2026-11-03
//	EMEA   4      null  2026-11-01
//	null   1.5    2     null
//	AMER   null   1     2026-11-05
func testFrame() *Frame {
	return &Frame{
		Columns: []Column{{"region", TypeText}, {"amount", TypeNumber}, {"units", TypeInteger}, {"day", TypeDate}},
		Rows:    5,
		Values: [][]string{
			{"EMEA", "AMER", "EMEA", "", "AMER"},
			{"10.5", "20", "4", "1.5", ""},
			{"3", "4", "", "2", "1"},
			{"2026-11-02", "2026-11-03", "2026-11-01", "", "2026-11-05"},
		},
		Null: [][]bool{
			{false, false, false, true, false},
			{false, false, false, false, true},
			{false, false, true, false, false},
			{false, false, false, true, false},
		},
	}
}

func TestAggregate_Apply(t *testing.T) {
	tests := []struct {
		name   string
		agg    Aggregate
		cols   []Column
		rows   [][]any // nil for null
		groups int
	}{
		{
			name: "sum by region, largest first, null a group of its own",
			agg:  Aggregate{GroupBy: []string{"region"}, Measures: []Measure{{Col: "amount", Fn: FnSum}}},
			cols: []Column{{"region", TypeText}, {"amount", TypeNumber}},
			rows: [][]any{{"AMER", "20"}, {"EMEA", "14.5"}, {nil, "1.5"}}, groups: 3,
		},
		{
			name: "every function",
			agg: Aggregate{GroupBy: []string{"region"}, Measures: []Measure{
				{Fn: FnCount}, {Col: "units", Fn: FnSum}, {Col: "amount", Fn: FnMean}, {Col: "day", Fn: FnMin, As: "first"},
				{Col: "day", Fn: FnMax, As: "last"}, {Col: "units", Fn: FnCount, As: "with_units"}, {Col: "amount", Fn: FnMax, As: "top"},
			}},
			cols: []Column{{"region", TypeText}, {"count", TypeInteger}, {"units", TypeInteger}, {"amount", TypeNumber},
				{"first", TypeDate}, {"last", TypeDate}, {"with_units", TypeInteger}, {"top", TypeNumber}},
			rows: [][]any{
				{"AMER", "2", "5", "20", "2026-11-03", "2026-11-05", "2", "20"},
				{"EMEA", "2", "3", "7.25", "2026-11-01", "2026-11-02", "1", "10.5"},
				{nil, "1", "2", "1.5", nil, nil, "1", "1.5"},
			},
			groups: 3,
		},
		{
			name: "no groups: one row of totals",
			agg:  Aggregate{Measures: []Measure{{Col: "amount", Fn: FnSum, As: "total"}, {Fn: FnCount}}},
			cols: []Column{{"total", TypeNumber}, {"count", TypeInteger}},
			rows: [][]any{{"36", "5"}}, groups: 1,
		},
		{
			name: "limit keeps the first groups",
			agg:  Aggregate{GroupBy: []string{"region"}, Measures: []Measure{{Fn: FnCount}}, Limit: 1},
			cols: []Column{{"region", TypeText}, {"count", TypeInteger}},
			rows: [][]any{{"AMER", "2"}}, groups: 3,
		},
		{
			name: "two group columns",
			agg:  Aggregate{GroupBy: []string{"region", "units"}, Measures: []Measure{{Col: "amount", Fn: FnMin}}},
			cols: []Column{{"region", TypeText}, {"units", TypeInteger}, {"amount", TypeNumber}},
			rows: [][]any{{"AMER", "4", "20"}, {"EMEA", "3", "10.5"}, {"EMEA", nil, "4"}, {nil, "2", "1.5"}, {"AMER", "1", nil}}, groups: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, err := tt.agg.Apply(testFrame())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.cols, out.Columns); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			var got [][]any
			for r := 0; r < int(out.Rows); r++ {
				var row []any
				for c := range out.Columns {
					if out.Null[c][r] {
						row = append(row, nil)
					} else {
						row = append(row, out.Values[c][r])
					}
				}
				got = append(got, row)
			}
			if diff := cmp.Diff(tt.rows, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if info.OfRows != 5 || info.Groups != tt.groups {
				t.Errorf("info %+v; want of 5 rows, %d groups", info, tt.groups)
			}
		})
	}
}

func TestAggregate_Check(t *testing.T) {
	cols := testFrame().Columns
	tests := []struct {
		name string
		agg  Aggregate
		want string // in the error; "" for none
	}{
		{"fine", Aggregate{GroupBy: []string{"region"}, Measures: []Measure{{Col: "amount", Fn: FnSum}, {Fn: FnCount}}}, ""},
		{"unknown group column", Aggregate{GroupBy: []string{"country"}, Measures: []Measure{{Fn: FnCount}}}, `group_by column "country" is not a column of the data`},
		{"unknown measure column", Aggregate{Measures: []Measure{{Col: "price", Fn: FnSum}}}, `measure column "price" is not a column of the data`},
		{"unknown function", Aggregate{Measures: []Measure{{Col: "amount", Fn: "median"}}}, `function "median" is unknown`},
		{"sum of text", Aggregate{Measures: []Measure{{Col: "region", Fn: FnSum}}}, `cannot sum column "region" of type text`},
		{"mean of a date", Aggregate{Measures: []Measure{{Col: "day", Fn: FnMean}}}, `cannot mean column "day" of type date`},
		{"no measures", Aggregate{GroupBy: []string{"region"}}, "has no measures"},
		{"a column named twice", Aggregate{Measures: []Measure{{Col: "amount", Fn: FnSum}, {Col: "amount", Fn: FnMean}}}, `two columns named "amount"`},
		{"a measure named as a group", Aggregate{GroupBy: []string{"region"}, Measures: []Measure{{Col: "region", Fn: FnMax}}}, `two columns named "region"`},
		{"grouped twice", Aggregate{GroupBy: []string{"region", "region"}, Measures: []Measure{{Fn: FnCount}}}, `groups by "region" twice`},
		{"negative limit", Aggregate{Measures: []Measure{{Fn: FnCount}}, Limit: -1}, "limit is -1"},
		{"a function without a column", Aggregate{Measures: []Measure{{Fn: FnMax}}}, "empty measure column"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.agg.check(cols)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, memstore.ErrInvalid) {
				t.Fatalf("check: %v; want ErrInvalid with %q", err, tt.want)
			}
			if _, _, err := tt.agg.Apply(testFrame()); err == nil {
				t.Error("Apply computed an aggregate check refuses")
			}
		})
	}
}

func TestParseBinding_ViewAggregate(t *testing.T) {
	base := "connector: orders\ncolumns:\n  - {name: region, type: text}\n  - {name: amount, type: number}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"declared", base + "view:\n  aggregate:\n    group_by: [region]\n    measures: [{col: amount, fn: sum}]\n    limit: 10\n", ""},
		{"before the first refresh, columns unknown", "connector: orders\nview: {aggregate: {group_by: [country], measures: [{fn: count}]}}\n", ""},
		{"an unknown column", base + "view: {aggregate: {group_by: [country], measures: [{fn: count}]}}\n", `"country" is not a column of the data`},
		{"an unknown function", base + "view: {aggregate: {measures: [{col: amount, fn: avg}]}}\n", `function "avg" is unknown`},
		{"an unknown field", base + "view: {aggregate: {measures: [{col: amount, fn: sum}], top: 3}}\n", "field top not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBinding([]byte(tt.yaml))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("ParseBinding: %v; want an error with %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			again, err := ParseBinding([]byte(b.Marshal()))
			if err != nil || !cmp.Equal(b, again) {
				t.Errorf("the binding does not survive Marshal: %v\n%s", err, b.Marshal())
			}
		})
	}
}

func TestFrame_Encodings(t *testing.T) {
	f := testFrame()
	want := `{"columns":[{"name":"region","type":"text"},{"name":"amount","type":"number"},{"name":"units","type":"integer"},{"name":"day","type":"date"}],` +
		`"records":[{"region":"EMEA","amount":10.5,"units":3,"day":"2026-11-02"},{"region":"AMER","amount":20,"units":4,"day":"2026-11-03"},` +
		`{"region":"EMEA","amount":4,"units":null,"day":"2026-11-01"},{"region":null,"amount":1.5,"units":2,"day":null},` +
		`{"region":"AMER","amount":null,"units":1,"day":"2026-11-05"}],"rows":5}`
	if got := string(f.JSON(nil)); got != want {
		t.Errorf("JSON:\n%s\nwant\n%s", got, want)
	}
	back, err := DecodeFrame([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, back); diff != "" {
		t.Errorf("DecodeFrame(JSON) (-want +got):\n%s", diff)
	}
	col := Columnar{
		Data: []byte(`{"columns":[{"name":"region","type":"text"},{"name":"amount","type":"number"},{"name":"units","type":"integer"},{"name":"day","type":"date"}],"rows":5,` +
			`"values":[{"dict":["EMEA","AMER"]},null,null,["2026-11-02","2026-11-03","2026-11-01",null,"2026-11-05"]],"x":1}`),
		Numbers: []byte(`[[0,1,0,-1,1],[10.5,20,4,1.5,null],[3,4,null,2,1],null]`),
	}
	if got := f.Columnar(map[string][]byte{"x": []byte("1")}); string(got.Data) != string(col.Data) || string(got.Numbers) != string(col.Numbers) {
		t.Errorf("Columnar:\n%s\n%s\nwant\n%s\n%s", got.Data, got.Numbers, col.Data, col.Numbers)
	}
}

func TestRefresher_ViewAggregate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, &Options{MaxViewBytes: 1 << 20})
	f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatal(err)
	}
	v, err := f.r.View(ctx, "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	full, ok, err := v.Columnar()
	if err != nil || !ok || !strings.Contains(string(full.Data), `"rows":3,"values":[`) || v.Aggregate != nil {
		t.Fatalf("within the cap: %s, %v, %+v", full.Data, err, v.Aggregate)
	}

	// Over the cap without an aggregate: too large.
	f.r.opts.MaxViewBytes = v.Bytes - 1
	if v, err := f.r.View(ctx, "sales", "dash"); err != nil || !v.TooLarge || v.Data != nil {
		t.Fatalf("over the cap: %+v, %v", v, err)
	}

	// With one: the aggregate, computed from the snapshot.
	b, err := f.r.ReadBinding(ctx, "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	b.View = &ViewSettings{Aggregate: &Aggregate{GroupBy: []string{"region"}, Measures: []Measure{{Col: "amount", Fn: FnSum}}, Limit: 2}}
	f.put(t, map[string]string{BindingPath("sales", "dash"): b.Marshal()})
	for _, fresh := range []bool{false, true} { // cached, then as another process reads it
		if fresh {
			f.r = New(f.store, f.r.snaps, &f.r.opts)
		}
		v, err = f.r.View(ctx, "sales", "dash")
		if err != nil {
			t.Fatal(err)
		}
		want := `{"columns":[{"name":"region","type":"text"},{"name":"amount","type":"number"}],"records":[{"region":"AMER","amount":20},{"region":"EMEA","amount":10.5}],"rows":2,` +
			`"aggregate":{"group_by":["region"],"measures":[{"col":"amount","fn":"sum"}],"limit":2,"of_rows":3,"groups":3}}`
		if v.TooLarge || v.Aggregate == nil || string(v.Data) != want {
			t.Errorf("fresh %v: aggregate view: too large %v, %+v\n%s\nwant\n%s", fresh, v.TooLarge, v.Aggregate, v.Data, want)
		}
		col, ok, err := v.Columnar()
		if err != nil || !ok || !strings.Contains(string(col.Data), `"values":[["AMER","EMEA"],null],"aggregate":{`) || string(col.Numbers) != `[null,[20,10.5]]` {
			t.Errorf("fresh %v: columnar aggregate: %s %s, %v", fresh, col.Data, col.Numbers, err)
		}
	}

	// An aggregate larger than the cap as well: too large.
	f.r.opts.MaxViewBytes = int64(len(v.Program)) + 10
	if v, err := f.r.View(ctx, "sales", "dash"); err != nil || !v.TooLarge || v.Aggregate != nil {
		t.Errorf("aggregate over the cap: %+v, %v", v, err)
	}
}
