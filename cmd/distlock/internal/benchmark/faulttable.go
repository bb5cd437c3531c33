package benchmark

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// faultClasses are the classes of failures in the table's order.
var faultClasses = []string{"unavailable", "timeout", "not held", "misconfigured", "other", "held"}

// writeFaults writes the faults section: a row per networked driver, what
// was done to it, its notes, and how its servers keep what they
// acknowledged.
func writeFaults(b *strings.Builder, r *Report) {
	if len(r.Faults) == 0 {
		return
	}
	fmt.Fprintf(b, "\nfaults: %d goroutines, TryAcquire+Release (TTL %v) on keys of their own, one fault after %s; the load goes on until\n",
		FaultGoroutines, FaultTTL, r.FaultsBefore)
	fmt.Fprintf(b, "a 1s window is back at %.0f%% of the median 1s rate before the fault (its first %v at 50%%), or %s at most.\n",
		recoveryShare*100, FaultBucket, r.FaultsLimit)
	b.WriteString("Backends on servers of their own run at once (drivers on the same servers, one after another): their\n" +
		"rates share the machine, and compare through the fault, not with the speed table's.\n\n")
	groups := []string{"", "", "before", "through the fault", "through the fault", "through the fault", "through the fault", "through the fault"}
	headers := []string{"driver", "fault", "ops/s", "ops", "failed", "failed as", "longest gap", "back to rate"}
	var rows [][]string
	for _, fr := range r.Faults {
		label := fr.Driver
		for _, row := range r.Rows {
			if row.Driver == fr.Driver {
				label = driverLabel(row)
			}
		}
		if !fr.HasFault() {
			rows = append(rows, []string{label, faultCell(fr), "-", "-", "-", "-", "-", "-"})
			continue
		}
		rows = append(rows, []string{label, fr.Summary, fmt.Sprintf("%.0f", fr.BeforePerSecond), fmt.Sprint(fr.Ops), fmt.Sprint(fr.Failed),
			failedAs(fr), millis(fr.LongestGapMS), recovery(fr)})
	}
	writeAligned(b, groups, headers, rows)
	b.WriteString("\nlongest gap: the longest time in which no acquisition succeeded. back to rate: from the fault to the\n" +
		"first such window (to the 100ms).\n")
	for _, fr := range r.Faults {
		switch {
		case fr.Fault != "" && fr.BackMS != nil:
			fmt.Fprintf(b, "%s: %s; it answered again %s after the fault\n", fr.Driver, fr.Fault, millis(*fr.BackMS))
		case fr.Fault != "":
			fmt.Fprintf(b, "%s: %s\n", fr.Driver, fr.Fault)
		}
		switch {
		case fr.Error != "":
			fmt.Fprintf(b, "%s, fault: failed: %s\n", fr.Driver, abridge(fr.Error))
		case fr.FailedBy["held"] > 0:
			fmt.Fprintf(b, "%s, fault: %d operations failed as held by another holder, on keys of their own: a false refusal (no\n"+
				"other holder existed; for Redlock, nodes that missed a release still held the key: issue 32)\n", fr.Driver, fr.FailedBy["held"])
		}
		for _, c := range faultClasses {
			if e := fr.LastErrorBy[c]; e != "" && fr.HasFault() {
				fmt.Fprintf(b, "%s, fault: the last %s failure: %s\n", fr.Driver, c, abridge(e))
			}
		}
		if !fr.Restored {
			fmt.Fprintf(b, "%s, fault: a server killed is NOT running again: start it with scripts/services.sh up\n", fr.Driver)
		}
	}
	writeDurability(b, r.Faults)
}

// faultCell is a row's last cell: the fault, or why there was none.
func faultCell(fr FaultResult) string {
	switch {
	case fr.Error != "" && fr.Summary == "":
		return "failed (see below)"
	case fr.Error != "":
		return fr.Summary + " (failed, see below)"
	case fr.Note != "":
		return fr.Note
	}
	return fr.Fault
}

// failedAs counts a row's failures by class: "unavailable 3, timeout 1".
func failedAs(fr FaultResult) string {
	var parts []string
	for _, c := range faultClasses {
		if n := fr.FailedBy[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// millis prints a duration in milliseconds, as seconds from 1s up.
func millis(v float64) string {
	if v >= 999.5 {
		return fmt.Sprintf("%.1fs", v/1000)
	}
	return fmt.Sprintf("%.0fms", v)
}

func recovery(fr FaultResult) string {
	if fr.RecoveryMS == nil {
		return "not back"
	}
	return millis(*fr.RecoveryMS)
}

// writeDurability says how the servers keep what they acknowledged, the
// drivers of each setting together, so that no one reads durability into
// speed.
func writeDurability(b *strings.Builder, frs []FaultResult) {
	drivers := make(map[string][]string)
	for _, fr := range frs {
		if fr.Durability != "" {
			drivers[fr.Durability] = append(drivers[fr.Durability], fr.Driver)
		}
	}
	if len(drivers) == 0 {
		return
	}
	b.WriteString("\nThe servers of --servers-dir, as it describes them (speed figures included):\n")
	for _, d := range slices.Sorted(maps.Keys(drivers)) {
		fmt.Fprintf(b, "  %s: %s\n", strings.Join(drivers[d], ", "), d)
	}
	b.WriteString("A server that does not fsync acknowledges sooner than a durable one, and a crash of the machine could\n" +
		"lose its locks: read no durability into these speeds.\n")
}
