package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// sample is a set of measurements of one thing, in one unit.
type sample []float64

// q is the nearest-rank quantile p (0 < p <= 1) of s.
func (s sample) q(p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	c := slices.Clone(s)
	slices.Sort(c)
	i := int(math.Ceil(p*float64(len(c)))) - 1
	return c[max(0, min(i, len(c)-1))]
}

// dist is a sample's p50, p90, p99 and maximum.
type dist struct{ p50, p90, p99, max float64 }

// dist summarises s.
func (s sample) dist() dist { return dist{s.q(0.5), s.q(0.9), s.q(0.99), s.q(1)} }

// minus subtracts the same quantile of a floor from each of d's quantiles:
// "added over the floor" at p50, p90 and p99.
func (d dist) minus(f dist) dist {
	return dist{d.p50 - f.p50, d.p90 - f.p90, d.p99 - f.p99, d.max - f.max}
}

// table is a markdown table under construction.
type table struct {
	head []string
	rows [][]string
}

// add appends a row.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// String renders the table.
func (t *table) String() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(t.head)) + "\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// num formats v with the given number of decimals, "—" for missing.
func num(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

// ratio formats a/b as "1.23×", "—" when it means nothing.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// verdict is the met/missed column.
func verdict(ok bool, known bool) string {
	switch {
	case !known:
		return "—"
	case ok:
		return "met"
	}
	return "**missed**"
}
