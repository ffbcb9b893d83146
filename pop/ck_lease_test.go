package pop

import (
	"testing"

	"popsim/model"
)

// A merge key's ref list keeps its refs in order through removals, holds
// one without a slice, and lets go of a removed ref's pointer.
func TestRefList(t *testing.T) {
	refs := []*ckRef{{first: 1}, {first: 2}, {first: 3}, {first: 4}}
	var l refList
	for _, r := range refs {
		l.add(r)
	}
	firsts := func() []model.LeaseID {
		var out []model.LeaseID
		for i := range l.len() {
			out = append(out, l.at(i).first)
		}
		return out
	}
	l.remove(refs[0])
	l.remove(refs[2])
	if got := firsts(); len(got) != 2 || got[0] != 2 || got[1] != 4 || l.contains(refs[2]) {
		t.Fatalf("after removing 1 and 3: %v", got)
	}
	if more := l.more(); len(more) < cap(more) && more[:cap(more)][len(more)] != nil {
		t.Fatal("a removed ref is still referenced by the list's storage")
	}
	l.remove(refs[1])
	l.remove(refs[3])
	if l.len() != 0 || l.first != nil {
		t.Fatalf("emptied list has %d refs", l.len())
	}
}
