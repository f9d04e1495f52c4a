//go:build !linux

package store

func exchange(dirfd int, a, b string) error { return errNoExchange }
