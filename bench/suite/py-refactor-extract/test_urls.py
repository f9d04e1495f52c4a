import unittest

from posts import post_url
from tags import tag_url


class TestURLs(unittest.TestCase):
    def test_post(self):
        self.assertEqual(post_url("Hello, World!"), "/posts/hello-world")

    def test_tag(self):
        self.assertEqual(tag_url("Go & Python"), "/tags/go-python")


if __name__ == "__main__":
    unittest.main()
