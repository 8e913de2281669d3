package pinning

// Init is replaced by the trampoline as it lands.
func Init() {}
