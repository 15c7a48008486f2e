import KioskApp
