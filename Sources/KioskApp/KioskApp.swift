// KioskApp
