package m

func F() int {
	return 2
}
