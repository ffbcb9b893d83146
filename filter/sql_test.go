package filter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"popsim/model"
)

// msg builds a message from key, value pairs; TAGS, KEYS and UNIQ_KEY go
// to their typed fields as model.SetProperty puts them.
func msg(kv ...string) *model.Message {
	if len(kv)%2 != 0 {
		panic("msg: odd key/value list")
	}
	m := &model.Message{Topic: "T"}
	for i := 0; i < len(kv); i += 2 {
		if err := m.SetProperty(kv[i], kv[i+1]); err != nil {
			panic(err)
		}
	}
	return m
}

// outcome renders Evaluate's result as TRUE, FALSE, NULL or ERROR.
func outcome(f *Filter, m *model.Message) string {
	t, err := f.Evaluate(m)
	if err != nil {
		var ee *EvalError
		if !errors.As(err, &ee) {
			return "ERROR of type " + fmt.Sprintf("%T", err)
		}
		return "ERROR"
	}
	return t.String()
}

type evalCase struct {
	expr string
	kv   []string // the message's properties
	want string   // TRUE, FALSE, NULL or ERROR (evaluation throws)
	rule string   // the upstream test or rule the case follows
}

func kv(s ...string) []string { return s }

// evalCases: expected results of SQL92 conditions, each from an upstream
// test (ExpressionTest, SqlFilterIT; their data in string form, since a
// broker's properties are strings) or from the upstream rule named.
var evalCases = []evalCase{
	// ExpressionTest: AND, OR over comparisons with string properties.
	{"a=3 and b<>4 And c>5 AND d<=4", kv("a", "3", "b", "5", "c", "6", "d", "1"), "TRUE", "ExpressionTest.testEvaluate_andTrue"},
	{"a=3 and b<>4 And c>5 AND d<=4", kv("a", "4", "b", "5", "c", "6", "d", "1"), "FALSE", "ExpressionTest.testEvaluate_andFalse"},
	{"a=3 or b<>4 Or c>5 OR d<=4", kv("a", "3"), "TRUE", "ExpressionTest.testEvaluate_orTrue (first)"},
	{"a=3 or b<>4 Or c>5 OR d<=4", kv("a", "4", "b", "5"), "TRUE", "ExpressionTest.testEvaluate_orTrue (second)"},
	{"a=3 or b<>4 Or c>5 OR d<=4", kv("a", "4", "b", "4", "c", "6"), "TRUE", "ExpressionTest.testEvaluate_orTrue (third)"},
	{"a=3 or b<>4 Or c>5 OR d<=4", kv("a", "4", "b", "4", "c", "3", "d", "2"), "TRUE", "ExpressionTest.testEvaluate_orTrue (fourth)"},
	{"a=3 or b<>4 Or c>5 OR d<=4", kv("a", "4", "b", "4", "c", "3", "d", "10"), "FALSE", "ExpressionTest.testEvaluate_orFalse"},
	// ExpressionTest: IN, NOT IN, BETWEEN, NOT BETWEEN, IS [NOT] NULL.
	{"a in ('3', '4', '5')", kv("a", "4"), "TRUE", "ExpressionTest.testEvaluate_inTrue"},
	{"a in ('3', '4', '5')", kv("a", "8"), "FALSE", "ExpressionTest.testEvaluate_inFalse"},
	{"a not in ('3', '4', '5')", kv("a", "8"), "TRUE", "ExpressionTest.testEvaluate_notInTrue"},
	{"a not in ('3', '4', '5')", kv("a", "5"), "FALSE", "ExpressionTest.testEvaluate_notInFalse"},
	{"a between 2 and 10", kv("a", "2"), "TRUE", "ExpressionTest.testEvaluate_betweenTrue (bounds included)"},
	{"a between 2 and 10", kv("a", "10"), "TRUE", "ExpressionTest.testEvaluate_betweenTrue"},
	{"a between 2 and 10", kv("a", "1"), "FALSE", "ExpressionTest.testEvaluate_betweenFalse"},
	{"a between 2 and 10", kv("a", "11"), "FALSE", "ExpressionTest.testEvaluate_betweenFalse"},
	{"a not between 2 and 10", kv("a", "11"), "TRUE", "ExpressionTest.testEvaluate_notBetweenTrue"},
	{"a not between 2 and 10", kv("a", "3"), "FALSE", "ExpressionTest.testEvaluate_notBetweenFalse"},
	{"a is null", kv("abc", "2"), "TRUE", "ExpressionTest.testEvaluate_isNullTrue"},
	{"a is null", kv("a", "2"), "FALSE", "ExpressionTest.testEvaluate_isNullFalse"},
	{"a is not null", kv("a", "2"), "TRUE", "ExpressionTest.testEvaluate_isNotNullTrue"},
	{"a is not null", kv("abc", "2"), "FALSE", "ExpressionTest.testEvaluate_isNotNullFalse"},
	{"a is not null and a='hello'", kv("a", "hello"), "TRUE", "ExpressionTest.testEvaluate_equal"},
	{"a is not null and a='hello'", nil, "FALSE", "ExpressionTest.testEvaluate_equal"},
	{"a=TRUE OR b=FALSE", kv("a", "true", "b", "false"), "TRUE", "ExpressionTest.testEvaluate_boolean"},
	{"a=TRUE OR b=FALSE", kv("a", "false", "b", "true"), "FALSE", "ExpressionTest.testEvaluate_boolean"},
	{"a is null OR a='hello'", nil, "TRUE", "ExpressionTest.testEvaluate_nullOr"},
	{"a is null OR a='hello'", kv("a", "abc"), "FALSE", "ExpressionTest.testEvaluate_nullOr"},
	{"TAGS is not null and TAGS='''''tag'''''", kv("TAGS", "''tag''"), "TRUE", "ExpressionTest.testEvaluate_stringHasString"},
	{"a > 3.1E10", kv("a", "3.1415E10"), "TRUE", "ExpressionTest.testEvaluate_exponent"},
	{"a > 3.14", kv("a", "3.1415"), "TRUE", "ExpressionTest.testEvaluate_floatNumber"},
	{"a > b", kv("a", "10", "b", "20"), "FALSE", "ExpressionTest.testEvaluate_twoVariable"},
	{"a > b", kv("a", "20", "b", "10"), "TRUE", "ExpressionTest.testEvaluate_twoVariableGt"},
	{"a between up and low", kv("a", "3.14"), "NULL", "ExpressionTest.testEvaluate_stringCompare (bounds absent)"},
	{"a between up and low", kv("a", "3.14", "up", "up", "low", "low"), "ERROR", "ExpressionTest.testEvaluate_stringCompare (strings that are not numbers)"},
	{"key is not null and key between 0 and 100", kv("key", "con"), "ERROR", "ExpressionTest.testEvaluate_stringCompare"},
	{"a between 0 and 100", kv("a", "abc"), "ERROR", "ExpressionTest.testEvaluate_stringCompare"},
	{"a=b", kv("a", "3.14", "b", "3.14"), "TRUE", "ExpressionTest.testEvaluate_stringCompare"},
	{"a<>b", kv("a", "3.14", "b", "3.14"), "FALSE", "ExpressionTest.testEvaluate_stringCompare"},
	{"a<>b", kv("a", "3.14", "b", "3.141"), "TRUE", "ExpressionTest.testEvaluate_stringCompare"},
	// ExpressionTest: CONTAINS, STARTSWITH, ENDSWITH (RocketMQ 5.1.3+).
	{"value contains 'x'", kv("value", "axb"), "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_has"},
	{"value startswith 'ax'", kv("value", "axb"), "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_has"},
	{"value endswith 'xb'", kv("value", "axb"), "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_has"},
	{"value not contains 'x'", kv("value", "axb"), "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_has"},
	{"value not startswith 'ax'", kv("value", "axb"), "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_has"},
	{"value not endswith 'xb'", kv("value", "axb"), "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_has"},
	{"value contains 'x'", kv("value", "abb"), "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_has_not"},
	{"value startswith 'x'", kv("value", "abb"), "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_has_not"},
	{"value endswith 'x'", kv("value", "abb"), "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_has_not"},
	{"value not contains 'x'", kv("value", "abb"), "TRUE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_has_not"},
	{"value not startswith 'x'", kv("value", "abb"), "TRUE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_has_not"},
	{"value not endswith 'x'", kv("value", "abb"), "TRUE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_has_not"},
	{"value contains ''", kv("value", "axb"), "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_hasEmpty"},
	{"value startswith ''", kv("value", "axb"), "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_hasEmpty"},
	{"value endswith ''", kv("value", "axb"), "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_hasEmpty"},
	{"value not contains ''", kv("value", "axb"), "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_hasEmpty"},
	{"value not startswith ''", kv("value", "axb"), "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_hasEmpty"},
	{"value not endswith ''", kv("value", "axb"), "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_hasEmpty"},
	{"value contains 'x'", nil, "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_null_has_2"},
	{"value startswith 'x'", nil, "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_null_has_2"},
	{"value endswith 'x'", nil, "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_null_has_2"},
	{"value not contains 'x'", nil, "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_null_has_2 (FALSE, not NULL)"},
	{"value not startswith 'x'", nil, "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_null_has_2"},
	{"value not endswith 'x'", nil, "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_null_has_2"},
	{"'axb' contains 'x'", nil, "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_string"},
	{"'axb' startswith 'ax'", nil, "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_string"},
	{"'axb' endswith 'xb'", nil, "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_string"},
	{"'axb' not contains 'x'", nil, "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_string_has_string"},
	{"'axb' not endswith 'u'", nil, "TRUE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_string_has_not_string"},
	{"'axb' startswith 'u'", nil, "FALSE", "ExpressionTest.testContains_startsWith_endsWith_string_has_not_string"},
	{"'axb' endswith ''", nil, "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_empty"},
	{"'axb' not startswith ''", nil, "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_string_has_empty"},
	{"' ' contains ' '", nil, "TRUE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_space"},
	{"' ' not endswith ' '", nil, "FALSE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_string_has_space"},
	{"'axb' contains '.'", nil, "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_special_1 (no pattern matching)"},
	{"'axb' not startswith '.'", nil, "TRUE", "ExpressionTest.test_notContains_notStartsWith_notEndsWith_string_has_special_1"},
	{`'s' endswith '\'`, nil, "FALSE", "ExpressionTest.testContains_StartsWith_EndsWith_string_has_special_2 (no escapes)"},
	{"a not in ('4', '4', '5') and b between 3 and 10 and c not contains 'axbc'", kv("a", "3", "b", "3", "c", "axbdc"), "TRUE", "ExpressionTest.testContainsAllInOne"},
	{"a not in ('4', '4', '5') and b between 3 and 10 and c not startswith 'axbc'", kv("a", "3", "b", "3", "c", "axbdc"), "TRUE", "ExpressionTest.testStartsWithAllInOne"},
	{"a not in ('4', '4', '5') and b between 3 and 10 and c not endswith 'axbc'", kv("a", "3", "b", "3", "c", "axbdc"), "TRUE", "ExpressionTest.testEndsWithAllInOne"},
	// SqlFilterIT: the TAGS property.
	{"(TAGS is not null and TAGS in ('TagA', 'TagB'))", kv("TAGS", "TagA"), "TRUE", "SqlFilterIT.testFilterConsumer"},
	{"(TAGS is not null and TAGS in ('TagA', 'TagB'))", kv("TAGS", "TagC"), "FALSE", "SqlFilterIT.testFilterConsumer"},
	{"(TAGS is not null and TAGS in ('TagA', 'TagB'))", nil, "FALSE", "SqlFilterIT: an untagged message has no TAGS property"},

	// doCreateEqual: exactly one null side gives NULL on the left, FALSE on
	// the right; two nulls are equal.
	{"a = 'x'", nil, "NULL", "ComparisonExpression.doCreateEqual: null left"},
	{"'x' = a", nil, "FALSE", "ComparisonExpression.doCreateEqual: null right"},
	{"a <> 'x'", nil, "NULL", "createNotEqual = NOT(equal): NOT NULL is NULL"},
	{"'x' <> a", nil, "TRUE", "createNotEqual = NOT(equal): NOT FALSE, so an absent property matches"},
	{"a = b", nil, "TRUE", "doCreateEqual: lv == rv when both are null"},
	{"a <> b", nil, "FALSE", "doCreateEqual: NOT TRUE"},
	// __compare: a string meets an int through Integer.valueOf.
	{"a = 5", kv("a", "5"), "TRUE", "__compare String/Integer: Integer.valueOf"},
	{"a = 5", kv("a", "+5"), "TRUE", "Integer.parseInt accepts a plus sign"},
	{"a = 5", kv("a", "-5"), "FALSE", "Integer.parseInt"},
	{"a = 5", kv("a", "5.0"), "ERROR", "Integer.valueOf(\"5.0\") throws NumberFormatException"},
	{"a = 5", kv("a", " 5"), "ERROR", "Integer.parseInt does not trim"},
	{"a = 5", kv("a", "abc"), "ERROR", "Integer.valueOf throws; the broker logs and does not deliver"},
	{"a = 5", kv("a", "3000000000"), "ERROR", "Integer.valueOf overflows"},
	{"a = 5", kv("a", "\u0665"), "TRUE", "Character.digit accepts Unicode decimal digits (ARABIC-INDIC FIVE)"},
	{"a = 5", kv("a", "\uff15"), "TRUE", "Character.digit accepts FULLWIDTH DIGIT FIVE"},
	{"a = 3000000000", kv("a", "3000000000"), "TRUE", "createFromDecimal: a literal beyond int is a Long; Long.valueOf"},
	{"a = 3000000000", kv("a", "3000000000.0"), "ERROR", "Long.valueOf does not read decimals"},
	// __compare: a string meets a double through Double.valueOf.
	{"a = 5.0", kv("a", "5"), "TRUE", "__compare String/Double: Double.valueOf"},
	{"a = 5.0", kv("a", " 5 "), "TRUE", "Double.valueOf trims"},
	{"a = 5.0", kv("a", "5d"), "TRUE", "Double.valueOf accepts a d suffix"},
	{"a = 5.0", kv("a", "0x1.4p2"), "TRUE", "Double.valueOf reads hexadecimal floating point"},
	{"a = 5.0", kv("a", "NaN"), "FALSE", "Double.valueOf(\"NaN\"); Double.compare"},
	{"a = 5.0", kv("a", "\uff15"), "ERROR", "Double.valueOf reads ASCII digits only"},
	// Ordering: the string side is converted to the literal's type.
	{"a > 5", kv("a", "5.5"), "ERROR", "__compare String/Integer: Integer.valueOf(\"5.5\") throws, so write 5.0"},
	{"a > 5.0", kv("a", "5.5"), "TRUE", "__compare String/Double"},
	{"a > 2147483647", kv("a", "2147483648"), "ERROR", "the literal is an Integer, so Integer.valueOf overflows"},
	{"a > 2147483648", kv("a", "2147483649"), "TRUE", "the literal is a Long"},
	{"a > b", kv("a", "10", "b", "9"), "TRUE", "ComparisonExpression.evaluate: two strings compare as doubles"},
	{"a > b", kv("a", "1e1", "b", "9"), "TRUE", "ComparisonExpression.evaluate: Double.valueOf"},
	{"a > b", kv("a", "x", "b", "9"), "ERROR", "ComparisonExpression.evaluate: strings that are not numbers"},
	{"a > b", kv("b", "9"), "NULL", "ComparisonExpression.evaluate: a null side is NULL"},
	// LogicExpression short cuts decide whether an error is raised.
	{"a = 1 OR b > 5", kv("a", "1", "b", "x"), "TRUE", "LogicExpression.createOR: TRUE left skips the right"},
	{"b > 5 OR a = 1", kv("a", "1", "b", "x"), "ERROR", "LogicExpression.createOR: the left is evaluated first"},
	{"a = 2 AND b > 5", kv("a", "1", "b", "x"), "FALSE", "LogicExpression.createAND: FALSE left skips the right"},
	{"b > 5 AND a = 2", kv("a", "1", "b", "x"), "ERROR", "LogicExpression.createAND"},
	{"FALSE AND a > 5", kv("a", "x"), "FALSE", "LogicExpression.createAND"},
	{"a = b > 5", kv("b", "x"), "ERROR", "doCreateEqual evaluates both sides before its null checks"},
	{"NULL OR TRUE", nil, "TRUE", "LogicExpression.createOR"},
	{"NULL OR FALSE", nil, "NULL", "LogicExpression.createOR"},
	{"NULL AND FALSE", nil, "FALSE", "LogicExpression.createAND"},
	{"NULL AND TRUE", nil, "NULL", "LogicExpression.createAND"},
	// A property used as a condition is cast: a string is FALSE.
	{"a", kv("a", "true"), "FALSE", "UnaryExpression.createBooleanCast: a String is not a Boolean"},
	{"a", nil, "NULL", "createBooleanCast: null stays null"},
	{"NOT a", kv("a", "x"), "TRUE", "createNOT(createBooleanCast): any present property"},
	{"NOT a", nil, "NULL", "createNOT: NOT NULL is NULL"},
	{"a OR TRUE", nil, "TRUE", "createBooleanCast, createOR"},
	{"a AND TRUE", nil, "NULL", "createBooleanCast, createAND"},
	// Booleans against strings.
	{"a = TRUE", kv("a", "True"), "TRUE", "__compare String/Boolean: Boolean.valueOf ignores case"},
	{"a = TRUE", kv("a", "yes"), "FALSE", "Boolean.valueOf(\"yes\") is false"},
	{"a = FALSE", kv("a", "yes"), "TRUE", "Boolean.valueOf: anything but \"true\" is false"},
	{"TRUE = a", kv("a", "true"), "ERROR", "__compare Boolean/String casts the Boolean to String: ClassCastException"},
	{"TRUE = a", nil, "FALSE", "doCreateEqual: null right"},
	{"TRUE <> a", nil, "TRUE", "NOT(equal) with a null right"},
	{"(a = 1) = TRUE", kv("a", "1"), "TRUE", "a condition is a Boolean value"},
	{"(a = 1) = 'x'", kv("a", "1"), "ERROR", "__compare Boolean/String: ClassCastException"},
	{"1 = TRUE", nil, "FALSE", "__compare Integer/Boolean returns -1"},
	{"'5' = 5", nil, "TRUE", "__compare String/Integer"},
	{"'abc' = 5", nil, "ERROR", "__compare String/Integer: NumberFormatException"},
	// Negation: numbers change sign; anything else negates to NULL.
	{"a = -5", kv("a", "-5"), "TRUE", "UnaryExpression.createNegate on an Integer"},
	{"-a = 5", kv("a", "-5"), "NULL", "createNegate: a String negates to null"},
	{"a > -'x'", kv("a", "3"), "NULL", "createNegate: null right side"},
	{"a <> -'x'", kv("a", "3"), "TRUE", "NOT(equal) with a null right side"},
	{"- -5 = 5", nil, "TRUE", "createNegate twice"},
	{"-TRUE IS NULL", nil, "TRUE", "createNegate: a Boolean negates to null"},
	// IN and the string operators with absent or odd operands.
	{"a NOT IN ('x')", nil, "NULL", "UnaryExpression.createInExpression: null stays null"},
	{"a NOT CONTAINS 'x'", nil, "FALSE", "NotContainsExpression: null is FALSE"},
	{"NOT (a CONTAINS 'x')", nil, "TRUE", "ContainsExpression FALSE, then NOT"},
	{"5 CONTAINS '5'", nil, "FALSE", "ContainsExpression: a non-string is FALSE"},
	{"(a = 1) CONTAINS ''", kv("a", "x"), "FALSE", "ContainsExpression: an empty search is FALSE before the operand is evaluated"},
	{"(a = 1) CONTAINS 'x'", kv("a", "x"), "ERROR", "ContainsExpression evaluates its operand"},
	// Double.compare.
	{"a > 1.5", kv("a", "NaN"), "TRUE", "Double.compare: NaN is above everything"},
	{"a < 1.5", kv("a", "NaN"), "FALSE", "Double.compare"},
	{"a >= b", kv("a", "NaN", "b", "NaN"), "TRUE", "Double.compare: NaN equals NaN"},
	{"a < b", kv("a", "-0.0", "b", "0.0"), "TRUE", "Double.compare: -0.0 is below 0.0"},
	{"a = 0.0", kv("a", "-0.0"), "FALSE", "Double.compare(-0.0, 0.0) is -1"},
	{"a > 1e308", kv("a", "Infinity"), "TRUE", "Double.valueOf(\"Infinity\")"},
	// Widening between literal types.
	{"9007199254740993 = 9007199254740992.0", nil, "TRUE", "__compare Long/Double widens the long to a double"},
	{"5 = 5L", nil, "TRUE", "createFromDecimal: 5L fits an int, so it is an Integer"},
	{"2147483648 > 2147483647", nil, "TRUE", "__compare Long/Integer"},
	// BETWEEN is two comparisons, each converting on its own.
	{"a BETWEEN 1 AND 2.5", kv("a", "2"), "TRUE", "createBetween = AND(>=, <=)"},
	{"a BETWEEN 1 AND 2.5", kv("a", "2.2"), "ERROR", "a >= 1 reads the string with Integer.valueOf"},
	{"a BETWEEN 3 AND 4.5", kv("a", "1"), "FALSE", "AND stops at the FALSE left side"},
	{"a NOT BETWEEN 3.0 AND 4.5", kv("a", "2.5"), "TRUE", "createNotBetween = OR(<, >)"},
	{"a NOT BETWEEN 3 AND 4.5", kv("a", "2.5"), "ERROR", "a < 3 reads the string with Integer.valueOf"},
	{"a BETWEEN -5 AND -10", kv("a", "-7"), "FALSE", "negated bounds are not checked at parse time and match nothing"},
	// The properties a stored message has.
	{"KEYS = 'k1'", kv("KEYS", "k1"), "TRUE", "MessageEvaluationContext: every property, typed ones too"},
	{"UNIQ_KEY IS NOT NULL", kv("UNIQ_KEY", "u1"), "TRUE", "MessageEvaluationContext"},
	{"TAGS IS NULL", nil, "TRUE", "an untagged message has no TAGS property"},
	{"RETRY_TOPIC IS NULL", kv("RETRY_TOPIC", "T"), "FALSE", "a retry copy carries RETRY_TOPIC"},
	{"a IS NULL", kv("a", ""), "TRUE", "MessageDecoder.string2messageProperties drops a property with an empty value"},
	{"a = ''", kv("a", ""), "NULL", "string2messageProperties: the empty property is absent"},
	{"A = '1'", kv("a", "1"), "NULL", "property names are case-sensitive (keywords are not)"},
	{"a Is NoT nUlL", kv("a", "1"), "TRUE", "keywords are IGNORE_CASE tokens"},
	// Literal conditions.
	{"TRUE", nil, "TRUE", "BooleanConstantExpression"},
	{"FALSE", nil, "FALSE", "BooleanConstantExpression"},
	{"NULL", nil, "NULL", "BooleanConstantExpression.NULL"},
	{"NOT NULL", nil, "NULL", "createNOT"},
	{"NULL IS NULL", nil, "TRUE", "createIsNull"},
	// Precedence: OR < AND < = <> IS < > >= < <= BETWEEN IN CONTAINS < NOT - +.
	{"a = 1 OR b = 2 AND c = 3", kv("a", "1", "c", "0"), "TRUE", "SelectorParser.jj: AND binds tighter than OR"},
	{"(a = 1 OR b = 2) AND c = 3", kv("a", "1", "c", "0"), "FALSE", "SelectorParser.jj: parentheses"},
	{"NOT a = 'x'", kv("a", "x"), "ERROR", "SelectorParser.jj: NOT is unary, so this is (NOT a) = 'x', a Boolean against a String"},
	{"NOT (a = 'x')", kv("a", "x"), "FALSE", "SelectorParser.jj"},
	{"NOT a IS NULL", nil, "TRUE", "SelectorParser.jj: (NOT a) IS NULL"},
	{"a = 1 IS NULL", nil, "TRUE", "SelectorParser.jj: equality operators chain left to right"},
	{"a > 1 AND b < 2 OR c = 3", kv("c", "3"), "TRUE", "SelectorParser.jj"},
	{"-a > 5", kv("a", "10"), "NULL", "SelectorParser.jj: unary minus binds to the property"},
	// Lexing.
	{"a/*x*/=/*y*/1", kv("a", "1"), "TRUE", "SelectorParser.jj: block comments are skipped"},
	{"a = 1 -- note\nAND b = 2", kv("a", "1", "b", "2"), "TRUE", "SelectorParser.jj: a line comment ends at its line end"},
	{"a = 1 -- note\r\nOR b = 2", kv("b", "2"), "TRUE", "SelectorParser.jj: CR LF ends a line comment"},
	{"a = --1", kv("a", "1"), "TRUE", "SelectorParser.jj: \"--\" without a line end is two minus signs"},
	{"a\t=\f'x'\r", kv("a", "x"), "TRUE", "SelectorParser.jj: white space is space, tab, LF, CR, FF"},
	{"$a_1 = 'x'", kv("$a_1", "x"), "TRUE", "SelectorParser.jj: ID is [a-zA-Z_$][a-zA-Z0-9_$]*"},
}

func TestEvaluate(t *testing.T) {
	for _, c := range evalCases {
		f, err := Parse(TypeSQL92, c.expr)
		if err != nil {
			t.Errorf("%q (%s): %v", c.expr, c.rule, err)
			continue
		}
		m := msg(c.kv...)
		if got := outcome(f, m); got != c.want {
			t.Errorf("%q on %v = %s, want %s (%s)", c.expr, c.kv, got, c.want, c.rule)
		}
		if got, want := f.Match(m), c.want == "TRUE"; got != want {
			t.Errorf("%q on %v: Match = %v, want %v (%s)", c.expr, c.kv, got, want, c.rule)
		}
		if !f.MatchConsumeQueue(TagsCode(m.Tags)) || !f.MatchTags(m.Tags) {
			t.Errorf("%q: a SQL92 filter must pass the consume-queue stage and the proxy's tag check", c.expr)
		}
	}
}

type parseErrCase struct {
	typ, expr string
	col       int    // 1-based column of the error, 0 when it has no place
	want      string // a substring of the message
	rule      string
}

var parseErrCases = []parseErrCase{
	{"SQL92", "", 1, "cannot be empty", "FilterAPI.build: Expression can't be null"},
	{"sql92", "a = 1", 0, "not supported", "FilterFactory.get is case-sensitive: no filter for sql92"},
	{"tag", "a", 0, "not supported", "FilterAPI.build: \"tag\" is not TAG, and no filter compiles it"},
	{"FOO", "a", 0, "not supported", "ConsumerFilterManager.build: FilterFactory.get(type) is null"},
	{"SQL92", "a and between 2 and 10", 7, "want a property, a literal", "ParserTest.invalidExpression"},
	{"SQL92", "a > 100000000000000000000000", 5, "out of range", "ParserTest.testParse_decimalOverFlow"},
	{"SQL92", "a > " + strings.Repeat("1", 400) + "." + strings.Repeat("1", 10), 5, "greater than the largest double", "ParserTest.testParse_floatOverFlow"},
	{"SQL92", " a between 10 and 0", 12, "low bound", "ParserTest.illegalBetween"},
	{"SQL92", "value contains x", 16, "want string", "ExpressionTest.testContains_has_not_string_1"},
	{"SQL92", "value not contains x", 20, "want string", "ExpressionTest.test_notContains_has_not_string_1"},
	{"SQL92", "value contains 123", 16, "want string", "ExpressionTest.testContains_has_not_string_2"},
	{"SQL92", "'axb' contains ", 16, "want string", "ExpressionTest.testContains_string_has_nothing"},
	{"SQL92", "a > 'x'", 5, "cannot be compared", "ComparisonExpression.checkLessThanOperand: strings"},
	{"SQL92", "'x' < a", 1, "cannot be compared", "checkLessThanOperand: either side"},
	{"SQL92", "a > TRUE", 5, "cannot be compared", "checkLessThanOperand: booleans"},
	{"SQL92", "a >= NULL", 6, "cannot be compared", "checkLessThanOperand: NULL"},
	{"SQL92", "a > (b = 1)", 6, "condition", "checkLessThanOperand: a BooleanExpression"},
	{"SQL92", "a BETWEEN 'a' AND 'b'", 11, "cannot be compared", "createBetween builds >= and <=, which check their operands"},
	{"SQL92", "a BETWEEN NULL AND 5", 11, "cannot be NULL", "createBetween: values can not be null"},
	{"SQL92", "a BETWEEN 5 AND 4.5", 11, "low bound", "createBetween compares constant bounds with __compare"},
	{"SQL92", "a BETWEEN 1 AND 'x'", 11, "cannot be compared", "createBetween: __compare(String, Integer) throws"},
	{"SQL92", "a NOT BETWEEN 'a' AND 5", 15, "cannot be compared", "createNotBetween builds < and >"},
	{"SQL92", "a = NULL", 5, "IS NULL", "ComparisonExpression.checkEqualOperand"},
	{"SQL92", "NULL <> a", 1, "IS NULL", "checkEqualOperand"},
	{"SQL92", "TRUE = 1", 1, "cannot be compared", "checkEqualOperandCompatability"},
	{"SQL92", "FALSE <> 'x'", 1, "cannot be compared", "checkEqualOperandCompatability"},
	{"SQL92", "5", 1, "not a condition", "SelectorParser.asBooleanExpression at the top"},
	{"SQL92", "'x'", 1, "not a condition", "asBooleanExpression"},
	{"SQL92", "-a", 1, "not a condition", "asBooleanExpression: a negation"},
	{"SQL92", "NOT 5", 5, "not a condition", "asBooleanExpression under NOT"},
	{"SQL92", "a AND 5", 7, "not a condition", "asBooleanExpression under AND"},
	{"SQL92", "5 OR a", 1, "not a condition", "asBooleanExpression under OR"},
	{"SQL92", "5 IN ('x')", 1, "needs a property", "ComparisonExpression.createInFilter"},
	{"SQL92", "-a IN ('x')", 1, "needs a property", "createInFilter"},
	{"SQL92", "a IN (1)", 7, "string literals only", "SelectorParser.jj: IN lists string literals"},
	{"SQL92", "a IN ()", 7, "string literals only", "SelectorParser.jj: IN needs one item"},
	{"SQL92", "a IN ('x'", 10, "want ')'", "SelectorParser.jj"},
	{"SQL92", "a IS 5", 6, "IS NULL or IS NOT NULL", "SelectorParser.jj"},
	{"SQL92", "a IS NOT 5", 10, "want NULL", "SelectorParser.jj"},
	{"SQL92", "a NOT LIKE 'x'", 7, "want CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN", "SelectorParser.jj: no LIKE"},
	{"SQL92", "a LIKE 'x'", 3, "after a complete expression", "SelectorParser.jj has no LIKE (fixed: trailing input is an error)"},
	{"SQL92", "a = 1 b = 2", 7, "missing AND", "apache/rocketmq#602: trailing input"},
	{"SQL92", "a = 1)", 6, "after a complete expression", "apache/rocketmq#602"},
	{"SQL92", "(a = 1", 7, "want ')'", "SelectorParser.jj"},
	{"SQL92", "a + 1 = 2", 3, "after a complete expression", "SelectorParser.jj: no arithmetic"},
	{"SQL92", "a * 2 = 4", 3, "unexpected character '*'", "SelectorParser.jj: no arithmetic"},
	{"SQL92", "a != 1", 3, "unexpected character '!'", "SelectorParser.jj: <> only"},
	{"SQL92", "a == 1", 4, "want a property, a literal", "SelectorParser.jj: = only"},
	{"SQL92", `a = "x"`, 5, "unexpected character '\"'", "SelectorParser.jj: strings are single-quoted"},
	{"SQL92", "a = 'x", 5, "not closed", "SelectorParser.jj: STRING_LITERAL"},
	{"SQL92", "a = 1 /* open", 7, "not closed", "SelectorParser.jj: BLOCK_COMMENT"},
	{"SQL92", "a.b = 1", 2, "'.' must be followed by a digit", "SelectorParser.jj: ID has no dots"},
	{"SQL92", "a = 0x10", 6, "after a complete expression", "ConstantExpression: no hexadecimal literals"},
	{"SQL92", "a = 007", 6, "after a complete expression", "DECIMAL_LITERAL: 0 or [1-9][0-9]*"},
	{"SQL92", "\u00e9 = 1", 1, "unexpected character 'é'", "SelectorParser.jj: ID is ASCII"},
	{"SQL92", "not = 1", 5, "want a property, a literal", "keywords are reserved"},
	{"SQL92", "a = 1 OR", 9, "want a property, a literal", "SelectorParser.jj"},
	{"SQL92", "a = 1\nAND b >", 8, "line 2, column 8", "positions name the line of a multi-line expression"},
	{"SQL92", strings.Repeat("(", maxDepth+1) + "a" + strings.Repeat(")", maxDepth+1), maxDepth + 1, "nests deeper", "popsim's nesting limit"},
	{"TAG", "||", 1, `nothing but "||"`, "FilterAPI.buildSubscriptionData: subString split error"},
	{"", "||||", 1, `nothing but "||"`, "String.split drops trailing empty strings"},
}

func TestParseErrors(t *testing.T) {
	for _, c := range parseErrCases {
		f, err := Parse(c.typ, c.expr)
		if err == nil {
			t.Errorf("Parse(%q, %q) = %s, want an error containing %q (%s)", c.typ, c.expr, f, c.want, c.rule)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q, %q): error %T, want *Error", c.typ, c.expr, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q) = %q, want it to contain %q (%s)", c.typ, c.expr, err, c.want, c.rule)
		}
		col := 0
		if pe.Offset >= 0 {
			col = len([]rune(pe.Expression[:pe.Offset][strings.LastIndexByte(pe.Expression[:pe.Offset], '\n')+1:])) + 1
		}
		if col != c.col {
			t.Errorf("Parse(%q, %q): error at column %d, want %d: %v (%s)", c.typ, c.expr, col, c.col, err, c.rule)
		}
	}
}

// TestAccepted lists expressions upstream accepts that look like they
// should not be, and the reverse cases' neighbours.
func TestAccepted(t *testing.T) {
	for _, c := range []struct{ expr, rule string }{
		{"a <= now", "ParserTest.nowExpression: now is just a property name"},
		{"a BETWEEN -5 AND -10", "createBetween checks only constant bounds; a negation is not a constant"},
		{"a BETWEEN 1 AND 1", "createBetween: low <= high"},
		{"a BETWEEN 1 AND 1.5", "__compare(Double, Integer) widens"},
		{"1 = TRUE", "checkEqualOperandCompatability looks only at a boolean left side"},
		{"'x' = TRUE", "checkEqualOperandCompatability"},
		{"TRUE = a", "checkEqualOperandCompatability: both sides must be constants"},
		{"(a) IN ('x')", "parentheses add no node: (a) is the property"},
		{"5 CONTAINS 'x'", "createContains checks nothing on its left"},
		{"(a = 1) CONTAINS 'x' CONTAINS 'y'", "createContains"},
		{"a > -'x'", "checkLessThanOperand lets a negation through"},
		{"-NOT a = 1", "createNegate takes any operand"},
		{"a = 1 = TRUE", "equality chains"},
		{"a IS NULL IS NOT NULL", "equality chains"},
		{"+ + 5 = a", "unary plus"},
		{"a > 0.0", "fixed apache/rocketmq#10862: zero is a double literal"},
		{"a > 1e-400", "fixed #10862: a literal that rounds to zero"},
		{"a > 5.", "FLOATING_POINT_LITERAL: digits then a point"},
		{"a > .5e-3", "FLOATING_POINT_LITERAL: a point then digits"},
		{"a > 5e3", "FLOATING_POINT_LITERAL: digits then an exponent"},
		{"a > 9223372036854775807", "createFromDecimal: Long.MAX_VALUE"},
		{"a = ''''", "STRING_LITERAL: '' is a quote"},
		{"a = 'multi\nline -- /* not a comment */'", "STRING_LITERAL takes any character but a lone quote"},
		{"a = 'é€😀'", "STRING_LITERAL takes any character"},
		{"-- leading comment\na = 1", "LINE_COMMENT"},
		{"a = 1 --c\n", "LINE_COMMENT at the end"},
		{"a = 1 /* trailing */", "BLOCK_COMMENT at the end"},
	} {
		if _, err := Parse(TypeSQL92, c.expr); err != nil {
			t.Errorf("Parse(%q): %v, want accepted (%s)", c.expr, err, c.rule)
		}
	}
}

func TestBugs(t *testing.T) {
	trailing := Parser{Bugs: Bugs{TrailingInput: true}}
	for _, c := range []struct{ expr, canonical, err string }{
		{"a = 1 b = 2", "a = 1", ""},
		{"a = 1)", "a = 1", ""},
		{"a LIKE '%x%'", "a", ""}, // a subscription that never matches
		{"a = 1 ,", "a = 1", ""},
		{"a = 1 b @", "a = 1", ""},                       // only one token is looked at
		{"a = 1 'open", "", "not closed"},                // the token looked at must lex
		{"a = 1 @", "", "unexpected character '@'"},      // likewise
		{"a = 1 NOT x", "", "want CONTAINS, STARTSWITH"}, // NOT enters the comparison loop
		{"a = 1 IS 5", "", "IS NULL or IS NOT NULL"},     // IS enters the equality loop
		{"a = 1 --c", "a = 1", ""},                       // "- -c" is not looked at
	} {
		f, err := trailing.Parse(TypeSQL92, c.expr)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("TrailingInput: Parse(%q) = %v, %v; want an error containing %q", c.expr, f, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("TrailingInput: Parse(%q): %v", c.expr, err)
		case c.err == "" && f.String() != c.canonical:
			t.Errorf("TrailingInput: Parse(%q) = %q, want %q", c.expr, f, c.canonical)
		}
	}
	zero := Parser{Bugs: Bugs{ZeroFloatLiteral: true}}
	for _, e := range []string{"a > 0.0", "a = 0.", "a < .0", "a > 0e5", "a > 1e-400"} {
		if _, err := zero.Parse(TypeSQL92, e); err == nil || !strings.Contains(err.Error(), "10862") {
			t.Errorf("ZeroFloatLiteral: Parse(%q) = %v, want the Double.MIN_VALUE error", e, err)
		}
	}
	for _, e := range []string{"a > 0.5", "a > 4.9e-324", "a > -0.5"} {
		if _, err := zero.Parse(TypeSQL92, e); err != nil {
			t.Errorf("ZeroFloatLiteral: Parse(%q): %v", e, err)
		}
	}
}

// canonicalCases: String() of parsed expressions. Same canonical text means
// the same compiled expression (ParserTest.testEquals compares them).
var canonicalCases = []struct{ expr, want string }{
	{"a=3 and b<>4 And c>5 AND d<=4", "a = 3 AND b <> 4 AND c > 5 AND d <= 4"},
	{"a=3  and    b<>4 And c>5 AND d<=4", "a = 3 AND b <> 4 AND c > 5 AND d <= 4"},
	{"a=3 or b<>4 Or c>5 OR d<=4", "a = 3 OR b <> 4 OR c > 5 OR d <= 4"},
	{"(a not in ('6', '4', '5')) or (b in ('3', '4', '5'))", "a NOT IN ('6', '4', '5') OR b IN ('3', '4', '5')"},
	{"(a between 2 and 10) AND (b not between 6 and 9)", "a BETWEEN 2 AND 10 AND b NOT BETWEEN 6 AND 9"},
	{"a=3 and b contains 'xxx' and c not contains 'xxx'", "a = 3 AND b CONTAINS 'xxx' AND c NOT CONTAINS 'xxx'"},
	{"a is null or a is not null", "a IS NULL OR a IS NOT NULL"},
	{"a = 1 OR b = 2 AND c = 3", "a = 1 OR b = 2 AND c = 3"},
	{"(a = 1 OR b = 2) AND c = 3", "(a = 1 OR b = 2) AND c = 3"},
	{"a = 1 OR (b = 2 OR c = 3)", "a = 1 OR (b = 2 OR c = 3)"},
	{"NOT a = 'x'", "NOT a = 'x'"},
	{"NOT (a = 'x')", "NOT (a = 'x')"},
	{"not not a", "NOT NOT a"},
	{"(((a)))", "a"},
	{"a = (b = 1)", "a = (b = 1)"},
	{"a = 1 = TRUE", "a = 1 = TRUE"},
	{"a contains 'x' contains 'y'", "a CONTAINS 'x' CONTAINS 'y'"},
	{"+5 = a", "5 = a"},
	{"- -5 = a", "- -5 = a"},
	{"-(-5) = a", "- -5 = a"},
	{"a = --1", "a = - -1"},
	{"-(a) > -(b)", "-a > -b"},
	{"-(a = 1) IS NULL", "-(a = 1) IS NULL"},
	{"a > 1.50", "a > 1.5"},
	{"a > 5.", "a > 5.0"},
	{"a > 1e21", "a > 1e+21"},
	{"a > 5L", "a > 5"},
	{"a > 3000000000l", "a > 3000000000"},
	{"a = 'it''s'", "a = 'it''s'"},
	{"a between -5 and +5", "a BETWEEN -5 AND 5"},
	{"a between (b) and (c)", "a BETWEEN b AND c"},
	{"true", "TRUE"},
	{"a = 1 -- c\n", "a = 1"},
}

func TestCanonical(t *testing.T) {
	for _, c := range canonicalCases {
		f, err := Parse(TypeSQL92, c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if got := f.String(); got != c.want {
			t.Errorf("Parse(%q).String() = %q, want %q", c.expr, got, c.want)
		}
		g, err := Parse(TypeSQL92, f.String())
		if err != nil || g.String() != c.want {
			t.Errorf("canonical %q does not parse back to itself: %v, %v", c.want, g, err)
		}
		if f.Kind() != SQL92 || f.Kind().String() != "SQL92" {
			t.Errorf("Parse(%q).Kind() = %v", c.expr, f.Kind())
		}
	}
}

func TestErrorWhere(t *testing.T) {
	_, err := Parse(TypeSQL92, "a = 'é' AND\n  b > 'x'")
	var pe *Error
	if !errors.As(err, &pe) || pe.Where() != "line 2, column 7" {
		t.Fatalf("error %v: want it at line 2, column 7", err)
	}
	_, err = Parse(TypeSQL92, "é_ = 1")
	if !errors.As(err, &pe) || pe.Where() != "column 1" || !strings.Contains(err.Error(), "U+00E9") {
		t.Fatalf("error %v: want it at column 1 naming U+00E9", err)
	}
}

func TestEvalErrorNamesTheOperation(t *testing.T) {
	f, err := Parse(TypeSQL92, "x = 1 OR a > 5")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Evaluate(msg("a", "5.5"))
	var ee *EvalError
	if !errors.As(err, &ee) || ee.Offset != 11 || !strings.Contains(err.Error(), "NumberFormatException") {
		t.Fatalf("Evaluate = %v, want an EvalError at byte 11 naming NumberFormatException", err)
	}
}

// TestLongInputsStayLinear: a long run of '-' with no line end (each "--"
// could start a line comment) and deep left-leaning chains parse quickly.
func TestLongInputsStayLinear(t *testing.T) {
	dashes := "a = " + strings.Repeat("-", 900) + "1"
	if _, err := Parse(TypeSQL92, dashes); err != nil {
		t.Fatalf("900 minus signs: %v", err)
	}
	long := strings.Repeat("-", 1<<20)
	if _, err := Parse(TypeSQL92, long); err == nil {
		t.Fatal("a megabyte of '-' must not parse")
	}
	chain := "a = 1" + strings.Repeat(" OR a = 1", 20000)
	f, err := Parse(TypeSQL92, chain)
	if err != nil || !f.Match(msg("a", "1")) || len(f.String()) != len(chain) {
		t.Fatalf("a chain of 20001 comparisons: %v", err)
	}
}
