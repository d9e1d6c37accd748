"""What dptool writes from data it did not make: file names that stay in their folder (names) and JSON text that any
reader reads (jsontext). Imports nothing of dptool but its errors."""
