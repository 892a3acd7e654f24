package metrics

// MaxLabels is the most labels any catalogued metric has. Adapters size
// fixed arrays with it so resolving labels allocates nothing.
const MaxLabels = 4

// Values are a metric's label values in Def.Labels order; entries past
// len(Def.Labels) are empty. Comparable, so usable as (part of) a map key.
type Values [MaxLabels]string

// Resolve maps alternating key, value pairs onto d.Labels order. Missing
// keys get ""; a repeated key keeps its last value. It returns a Drop*
// reason ("" on success): DropOddLabels for an odd count, DropUnknownLabel
// for a key d does not declare. It does not allocate.
func (d *Def) Resolve(kv []string) (vals Values, reason string) {
	if len(kv)%2 != 0 {
		return vals, DropOddLabels
	}
	for i := 0; i < len(kv); i += 2 {
		j := d.labelIndex(kv[i])
		if j < 0 || j >= MaxLabels {
			return vals, DropUnknownLabel
		}
		vals[j] = kv[i+1]
	}
	return vals, ""
}

func (d *Def) labelIndex(key string) int {
	for i, l := range d.Labels {
		if l == key {
			return i
		}
	}
	return -1
}
