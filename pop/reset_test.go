package pop

import (
	"reflect"
	"testing"
)

// TestPopResultResetClearsEveryField: Reset sets every field of a result
// to its zero value but for the slices, which it empties keeping their
// storage. Every field is set first (by reflection, so a field added to
// PopResult later is covered too).
func TestPopResultResetClearsEveryField(t *testing.T) {
	var r PopResult
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 2, 3))
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(7)
		default:
			t.Fatalf("field %s: kind %s this test does not set", v.Type().Field(i).Name, f.Kind())
		}
	}
	r.Reset()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() == reflect.Slice {
			if f.Len() != 0 || f.Cap() != 3 {
				t.Errorf("%s after Reset: len %d cap %d, want 0 and the storage kept (3)", name, f.Len(), f.Cap())
			}
			continue
		}
		if !f.IsZero() {
			t.Errorf("%s after Reset: %v, want zero", name, f.Interface())
		}
	}
}
