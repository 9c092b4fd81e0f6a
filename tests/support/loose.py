"""A reply indented four columns short of its file (issue 30's wrong write), for the end-to-end
and app tests of loose placement."""

RATES = ("class Rates:\n    def rate(self, kind):\n        if kind == 'day':\n"
         "            value = 1\n        return value\n")
SHORT = """Here is the change:

```diff
--- a/rates.py
+++ b/rates.py
@@ -3,3 +3,5 @@
     if kind == 'day':
         value = 1
+    else:
+        value = 0
     return value
```
"""
# what SHORT means: the `else` inside the method
RATES_AFTER = RATES.replace("        return",
                            "        else:\n            value = 0\n        return")
