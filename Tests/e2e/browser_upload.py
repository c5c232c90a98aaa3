#!/usr/bin/env python3
"""A person with a browser on `p2p receive --web`'s upload page: headless Chromium driven by Selenium.

usage: browser_upload.py URL PIN SCREENSHOT_PREFIX FILE...

Opens URL in a phone-sized viewport, picks FILEs, types a wrong PIN and reads the error the page shows,
then the right PIN, and waits (up to 90 s: the receiver may be asking a person) until the page says the
files were sent. Screenshot: PREFIX-upload.png (after sending). Prints one JSON object:
{"wrong_pin_error", "status"}; exits 1 when a step does not happen in time.
"""
import json
import sys

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from browser_share import browser


def main(url, pin, shots, *files):
    driver = browser("/tmp")
    result = {}
    try:
        driver.get(url)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "files"))
        driver.find_element(By.ID, "files").send_keys("\n".join(files))
        wrong = ("1" if pin[0] == "0" else "0") + pin[1:]
        driver.find_element(By.ID, "pin").send_keys(wrong)
        driver.find_element(By.ID, "send").click()
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "error").text.strip() != "")
        result["wrong_pin_error"] = driver.find_element(By.ID, "error").text
        field = driver.find_element(By.ID, "pin")
        field.clear()
        field.send_keys(pin)
        driver.find_element(By.ID, "send").click()
        WebDriverWait(driver, 90, poll_frequency=0.2).until(
            lambda d: d.find_element(By.ID, "status").text.startswith("Sent") or d.find_element(By.ID, "error").text.strip() != "")
        result["status"] = driver.find_element(By.ID, "status").text
        result["error"] = driver.find_element(By.ID, "error").text
        driver.save_screenshot(shots + "-upload.png")
        print(json.dumps(result))
        return 0 if result["status"].startswith("Sent") else 1
    except TimeoutException as error:
        result["status"] = driver.find_element(By.ID, "status").text
        result["error"] = driver.find_element(By.ID, "error").text
        print(json.dumps(result))
        print(f"a step did not happen in time: {error}", file=sys.stderr)
        return 1
    finally:
        driver.quit()


if __name__ == "__main__":
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
