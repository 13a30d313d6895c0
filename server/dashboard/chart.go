package dashboard

import (
	"strconv"
	"time"

	"gateway/store"
)

// The campaign chart: an SVG drawn on the server from the hourly counters (no script), one
// group of four bars per hour or day: of the messages recorded in it, the funnel's sent,
// delivered and read, and the failed ones (funnel.go). The same numbers are in a table beside it for screen
// readers and for reading exact values.

const (
	chartW, chartH      = 720, 220
	chartLeft, chartTop = 44, 22
	chartBottom         = 30
	maxBuckets          = 90
)

type chartBar struct {
	X, Y, W, H float64
	Class      string
}

type chartLabel struct {
	X, Y float64
	Text string
	// Minor marks every other date label when there are more than four, left out on narrow
	// screens where the text is larger.
	Minor bool
}

type chartRow struct {
	Label                                   string
	Messages, Sent, Delivered, Read, Failed int64
}

type chart struct {
	Unit         string // hour or day
	W, H         int
	Bars         []chartBar
	XLabels      []chartLabel
	YLabels      []chartLabel
	Rows         []chartRow
	BaseY, PlotW float64
	Max          int64
}

// chartRange picks the buckets for a campaign sent between first and last: hours for up to
// three days, days beyond, at most maxBuckets of them (the latest), in the viewer's zone loc.
func chartRange(first, last time.Time, loc *time.Location) (from, to time.Time, unit string) {
	unit = "hour"
	if last.Sub(first) > 72*time.Hour {
		unit = "day"
	}
	from, to = bucketStart(first, unit, loc), nextBucket(bucketStart(last, unit, loc), unit)
	if unit == "day" && to.Sub(from) > maxBuckets*24*time.Hour {
		from = to.AddDate(0, 0, -maxBuckets)
	}
	return from, to, unit
}

// bucketStart is the start of the hour or the day (midnight in loc) that holds t, in loc.
func bucketStart(t time.Time, unit string, loc *time.Location) time.Time {
	t = t.In(loc)
	if unit == "day" {
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, loc)
}

// nextBucket is the start of the bucket after the one starting at t: an hour later, or the next
// midnight (a day of 23 or 25 hours where the clocks change).
func nextBucket(t time.Time, unit string) time.Time {
	if unit == "day" {
		return t.AddDate(0, 0, 1)
	}
	return t.Add(time.Hour)
}

func newChart(bs []store.CampaignBucket, unit string, from, to time.Time) chart {
	layout := "01-02 15h"
	if unit == "day" {
		layout = "01-02"
	}
	byStart := map[int64]store.CampaignBucket{}
	for _, b := range bs {
		byStart[b.Start.Unix()] = b
	}
	c := chart{Unit: unit, W: chartW, H: chartH}
	var rows []chartRow
	for t := from; t.Before(to) && len(rows) <= 24*maxBuckets; t = nextBucket(t, unit) {
		b := byStart[t.Unix()]
		f := funnelOf(b.StatusCounts)
		row := chartRow{Label: t.Format(layout), Messages: f.Messages, Sent: f.Sent, Delivered: f.Delivered, Read: f.Read, Failed: f.Failed}
		rows = append(rows, row)
		c.Max = max(c.Max, row.Sent, row.Failed)
	}
	c.Rows = rows
	if len(rows) == 0 || c.Max == 0 {
		return c
	}
	plotW := float64(chartW - chartLeft - 4)
	plotH := float64(chartH - chartTop - chartBottom)
	c.BaseY, c.PlotW = float64(chartTop)+plotH, plotW
	group := plotW / float64(len(rows))
	barW := group * 0.8 / 4
	labelEvery := max(1, len(rows)/8)
	for i, row := range rows {
		x0 := float64(chartLeft) + float64(i)*group + group*0.1
		for j, v := range []int64{row.Sent, row.Delivered, row.Read, row.Failed} {
			h := plotH * float64(v) / float64(c.Max)
			c.Bars = append(c.Bars, chartBar{X: round1(x0 + float64(j)*barW), Y: round1(c.BaseY - h), W: round1(barW), H: round1(h),
				Class: []string{"s-sent", "s-delivered", "s-read", "s-failed"}[j]})
		}
		if i%labelEvery == 0 {
			c.XLabels = append(c.XLabels, chartLabel{X: round1(x0), Y: c.BaseY + 18, Text: row.Label})
		}
	}
	if len(c.XLabels) > 4 {
		for i := 1; i < len(c.XLabels); i += 2 {
			c.XLabels[i].Minor = true
		}
	}
	for _, f := range []float64{0, 0.5, 1} {
		v := int64(float64(c.Max) * f)
		c.YLabels = append(c.YLabels, chartLabel{X: chartLeft - 6, Y: round1(c.BaseY - plotH*f + 4), Text: strconv.FormatInt(v, 10)})
	}
	return c
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
