package payload

import "strconv"

// The json document, with fields in this order:
//
//	{"id":"<16 hex>","ts":<13-digit ms>,"type":"<event>","user":"user-<6 digits>",
//	 "region":"<region>","status":"<status>","amount":<int>.<2 digits>,"text":"<padding>"}
//
// The padding text ([a-z ] from the same stream) absorbs whatever the record
// size leaves, so every document is exactly the record size.
var (
	eventTypes = []string{"page_view", "click", "login", "logout", "purchase", "add_to_cart", "search", "share"}
	regions    = []string{"eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1", "ap-northeast-1", "sa-east-1"}
	statuses   = []string{"ok", "pending", "failed", "refunded"}
)

// baseTimeMs is a fixed epoch (2026-01-01T00:00:00Z) so timestamps are
// reproducible and always 13 digits.
const baseTimeMs = 1767225600000

// maxAmountInt bounds the amount's integer part (at most 5 digits).
const maxAmountInt = 100000

// MinJSONSize is the smallest record size the json mode can fill: the
// document with its longest choices and an empty text.
var MinJSONSize = minJSONSize()

func minJSONSize() int {
	b := appendJSONFields(nil, 0xffffffffffffffff, baseTimeMs+9999999, longest(eventTypes), 999999, longest(regions), longest(statuses), maxAmountInt-1, 99)
	return len(b) + len(`,"text":""}`)
}

func longest(ss []string) string {
	l := ""
	for _, s := range ss {
		if len(s) > len(l) {
			l = s
		}
	}
	return l
}

func appendJSONFields(b []byte, id uint64, ts int64, typ string, user int, region, status string, amountInt, amountCents int) []byte {
	b = append(b, `{"id":"`...)
	const hex = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hex[(id>>uint(shift))&0xf])
	}
	b = append(b, `","ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","user":"user-`...)
	b = appendPadded(b, user, 6)
	b = append(b, `","region":"`...)
	b = append(b, region...)
	b = append(b, `","status":"`...)
	b = append(b, status...)
	b = append(b, `","amount":`...)
	b = strconv.AppendInt(b, int64(amountInt), 10)
	b = append(b, '.')
	b = appendPadded(b, amountCents, 2)
	return b
}

func appendPadded(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

const textAlphabet = "abcdefghijklmnopqrstuvwxyz     " // spaces weighted so it reads like words

// appendJSON appends one document of exactly size bytes (size >= MinJSONSize).
// index is the value's position in the pool; it advances the timestamp so
// events look ordered.
func appendJSON(b []byte, r *splitmix64, index, size int) []byte {
	start := len(b)
	id := r.next()
	ts := int64(baseTimeMs + index*10 + r.intn(10))
	typ := eventTypes[r.intn(len(eventTypes))]
	user := r.intn(1000000)
	region := regions[r.intn(len(regions))]
	status := statuses[r.intn(len(statuses))]
	amountInt, amountCents := r.intn(maxAmountInt), r.intn(100)
	b = appendJSONFields(b, id, ts, typ, user, region, status, amountInt, amountCents)
	b = append(b, `,"text":"`...)
	pad := size - (len(b) - start) - len(`"}`)
	for i := 0; i < pad; i++ {
		b = append(b, textAlphabet[r.intn(len(textAlphabet))])
	}
	return append(b, `"}`...)
}
