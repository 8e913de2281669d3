//go:build !race

package pinning

const raceBuild = false
