// Package load is the generator library behind `ceiling load`.
package load
