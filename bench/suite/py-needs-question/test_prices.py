import unittest

from prices import format_price


class TestPrices(unittest.TestCase):
    def test_has_two_decimals(self):
        self.assertTrue(format_price(1999).endswith("19.99") or "19.99" in format_price(1999))


if __name__ == "__main__":
    unittest.main()
