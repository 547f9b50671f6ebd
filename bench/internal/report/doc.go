// Package report holds the benchmark's results and renders them: an aligned
// text table, a markdown table, comparison lines (yrpc against the best
// peer and the reference lines), results.json and an SVG chart drawn
// without plotting dependencies.
package report
