package main

import "testing"

func TestRun(t *testing.T) {
	if err := run([]string{"test"}); err != nil {
		t.Fatal(err)
	}
}
