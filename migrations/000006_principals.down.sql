DROP TABLE principals;
