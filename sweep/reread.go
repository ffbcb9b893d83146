package sweep

import (
	"popsim/report"
)

// Reread reads a sweep or plan folder back for `popsim report`: its
// manifest, every complete run folder, a plan's question, answer and
// target; missing lists the runs of its shard it lacks (absent or marked
// incomplete), which the sweep's Missing names too.
func Reread(dir string) (rs *report.Sweep, m Manifest, missing []MissingRun, err error) {
	m, err = ReadManifest(dir)
	if err != nil {
		return nil, m, nil, err
	}
	rs = m.NewReport()
	if err := applyPlanInfo(dir, rs); err != nil {
		return nil, m, nil, err
	}
	if _, err := AddRuns(dir, rs); err != nil {
		return nil, m, nil, err
	}
	if missing, err = m.Missing(dir); err != nil {
		return nil, m, nil, err
	}
	for _, r := range missing {
		rs.Missing = append(rs.Missing, r.String())
	}
	return rs, m, missing, nil
}

// Rerender re-renders a sweep or plan folder's report and charts from its
// runs (Reread). A folder with every run present is complete and loses
// its IncompleteFile; one with runs missing keeps it (or gets one), and
// its report says what is missing.
func Rerender(dir string) (*report.Sweep, []MissingRun, error) {
	rs, _, missing, err := Reread(dir)
	if err != nil {
		return nil, nil, err
	}
	if len(missing) > 0 {
		if _, marked := Incomplete(dir); !marked {
			if err := Mark(dir, "runs are missing: popsim report lists them"); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := report.WriteSweep(dir, rs); err != nil {
		return nil, nil, err
	}
	if len(missing) == 0 {
		return rs, nil, Unmark(dir)
	}
	return rs, missing, nil
}
