package payload_test

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/load/payload"
)

func ExampleNew() {
	pool, err := payload.New(payload.JSON, 1, payload.MinJSONSize, 2)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d values of %d bytes\n%s\n", pool.Len(), pool.Size(), pool.Value(0))
	// Output:
	// 2 values of 160 bytes
	// {"id":"910a2dec89025cc1","ts":1767225600009,"type":"search","user":"user-780235","region":"ap-northeast-1","status":"ok","amount":67045.33,"text":"wh pjcglusq"}
}
