package profiler

import (
	"os"
	"testing"
)

func TestProbeLookalikes(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip()
	}
	for name, data := range map[string]string{"nyc": genNYC311(10000), "store": genSuperstore(30000, false), "storec": genSuperstore(2000, true)} {
		p := writeTemp(t, name+".csv", data)
		tp := profileFile(t, p)
		md := tp.Markdown(0)
		t.Logf("%s: %d tokens\n%s", name, Tokens(md), md)
	}
}
