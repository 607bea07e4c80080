package rules

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

const dashboardFile = "../../deploy/grafana/lfinit.json"

// Debian has no Grafana package, so the dashboard is not loaded in a
// Grafana here: its structure is checked, and test/monitoring runs every
// query in it against a real Prometheus.

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasourceRef  `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int                      `json:"id"`
		Type       string                   `json:"type"`
		Title      string                   `json:"title"`
		Datasource *datasourceRef           `json:"datasource"`
		GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
		Targets    []struct {
			RefID      string         `json:"refId"`
			Expr       string         `json:"expr"`
			Datasource *datasourceRef `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

// TestDashboardStructure: the JSON loads; every panel and query uses the
// datasource variable (so the dashboard imports into any Grafana, whatever
// its Prometheus is called); panel ids and query refIds are unique; each
// panel has a place and queries; every $variable in a query is defined or
// one of Grafana's own.
func TestDashboardStructure(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard title %q uid %q with %d panels", d.Title, d.UID, len(d.Panels))
	}
	vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	dsVar := ""
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type == "datasource" {
			dsVar = v.Name
			if string(v.Query) != `"prometheus"` {
				t.Errorf("datasource variable %s: query %s, want \"prometheus\"", v.Name, v.Query)
			}
		}
	}
	if dsVar == "" {
		t.Fatal("no datasource variable in templating")
	}
	want := "${" + dsVar + "}"
	for _, v := range d.Templating.List {
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != want) {
			t.Errorf("variable %s: datasource %+v, want uid %s", v.Name, v.Datasource, want)
		}
	}
	ids := map[int]bool{}
	varRE := regexp.MustCompile(`\$\{?(\w+)`)
	for _, p := range d.Panels {
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("panel %q: id %d missing or not unique", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Title == "" || p.Type == "" || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %d: title %q type %q gridPos %+v", p.ID, p.Title, p.Type, p.GridPos)
		}
		if p.Datasource == nil || p.Datasource.UID != want || p.Datasource.Type != "prometheus" {
			t.Errorf("panel %q: datasource %+v, want the variable %s", p.Title, p.Datasource, want)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no queries", p.Title)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			if q.Expr == "" || q.RefID == "" || refs[q.RefID] {
				t.Errorf("panel %q: query %+v (empty, or refId not unique)", p.Title, q)
			}
			refs[q.RefID] = true
			if q.Datasource != nil && q.Datasource.UID != want {
				t.Errorf("panel %q query %s: datasource %+v, want the variable", p.Title, q.RefID, q.Datasource)
			}
			for _, m := range varRE.FindAllStringSubmatch(q.Expr, -1) {
				// $1 and the like are label_replace's, not Grafana's.
				if !vars[m[1]] && !regexp.MustCompile(`^\d+$`).MatchString(m[1]) {
					t.Errorf("panel %q: query uses $%s, which is not defined", p.Title, m[1])
				}
			}
		}
	}
}
