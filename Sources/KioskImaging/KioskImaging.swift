// KioskImaging
